"""The soak's clients and command line (soak/load.py, `python -m soak`), without starting the system."""

from __future__ import annotations

import httpx
import pytest

from soak.__main__ import main
from soak.load import EXAMPLES_PER_CODE, Tally, connect_code
from soak.load import main as load_main


def test_connect_answers_are_read_as_codes() -> None:
    assert connect_code(httpx.Response(200, content=b"{}")) == ("ok", "")
    unavailable = httpx.Response(503, json={"code": "unavailable", "message": "database unreachable"})
    assert connect_code(unavailable) == ("unavailable", "database unreachable")
    assert connect_code(httpx.Response(502, text="<html>bad gateway</html>")) == (
        "http_502",
        "<html>bad gateway</html>",
    )


def test_a_tally_counts_every_answer_but_keeps_few_messages() -> None:
    tally = Tally()
    for i in range(EXAMPLES_PER_CODE + 3):
        tally.record("grpc GetCluster", "internal", f"boom {i}")
    tally.record("grpc GetCluster", "ok")
    tally.record("grpc GetCluster", "unavailable", "down")
    result = tally.as_json()
    assert result["answers"] == {
        "grpc GetCluster internal": EXAMPLES_PER_CODE + 3,
        "grpc GetCluster ok": 1,
        "grpc GetCluster unavailable": 1,
    }
    assert len(result["examples"]["internal"]) == EXAMPLES_PER_CODE
    assert result["unavailable_first"] is not None


@pytest.mark.parametrize(
    "argv", [["--minutes", "0"], ["--minutes", "121"], ["--public-rate", "0"]], ids=["zero", "too long", "no rate"]
)
def test_bad_soak_arguments_are_refused_before_anything_starts(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert "must be in" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["public", "--protocol", "grpc", "--port", "1", "--seconds", "0", "--out", "x"],
        ["public", "--protocol", "grpc", "--port", "1", "--seconds", "5", "--rate", "0", "--out", "x"],
        ["public", "--protocol", "http3", "--port", "1", "--seconds", "5", "--out", "x"],
    ],
    ids=["no time", "no rate", "unknown protocol"],
)
def test_a_load_client_refuses_unbounded_or_unknown_work(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        load_main(argv)
    assert stopped.value.code == 2
