// Turning proto3 JSON values into what a person reads: numbers, ages, times, sizes.
//
// proto3 JSON leaves fields at their default out and writes int64 as strings, so every reader here
// accepts undefined and strings. Formatting is fixed to English (en-US) so pages read the same everywhere.

import { h } from "./dom.js";

const LOCALE = "en-US";
const integerFormat = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 });
const decimalFormat = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 1 });
const timeFormat = new Intl.DateTimeFormat(LOCALE, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hour12: false,
  timeZoneName: "short",
});

// A count from proto3 JSON: int32 numbers, int64 strings, or absent (zero).
export function count(value) {
  const number = Number(value ?? 0);
  return Number.isFinite(number) ? number : 0;
}

export function formatCount(value) {
  return integerFormat.format(count(value));
}

// "45 s", "12 min", "3 h 5 min", "2 d 4 h": an age or interval in seconds, coarse enough to scan.
export function formatDuration(seconds) {
  const s = Math.max(0, Math.round(count(seconds)));
  if (s < 90) {
    return `${s} s`;
  }
  const minutes = Math.round(s / 60);
  if (minutes < 90) {
    return `${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 48) {
    const rest = minutes % 60;
    return rest ? `${hours} h ${rest} min` : `${hours} h`;
  }
  const days = Math.floor(hours / 24);
  const restHours = hours % 24;
  return restHours ? `${days} d ${restHours} h` : `${days} d`;
}

const dateFormat = new Intl.DateTimeFormat(LOCALE, {
  year: "numeric",
  month: "short",
  day: "numeric",
  timeZone: "UTC",
});

// "Sep 4, 2024": a day is enough for creation and deletion dates in a table (UTC, so it is the same day
// everywhere); the exact time is in the element's title.
export function formatDate(iso) {
  if (!iso) {
    return "";
  }
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : dateFormat.format(date);
}

const momentFormat = new Intl.DateTimeFormat(LOCALE, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hour12: false,
  timeZone: "UTC",
});

// "Dec 1, 2026, 14:05 UTC": when a state began, to the minute, so a change made today says when
// today (a day alone reads as "some time that day"); seconds are in the element's title.
export function formatMoment(iso) {
  if (!iso) {
    return "";
  }
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : `${momentFormat.format(date)} UTC`;
}

export function formatTime(iso) {
  if (!iso) {
    return "";
  }
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : timeFormat.format(date);
}

// A <time> element showing the formatted time, with the exact value machine-readable.
export function timeElement(iso, text = null) {
  if (!iso) {
    return h("span", { class: "muted" }, "never");
  }
  return h("time", { datetime: iso, title: formatTime(iso) }, text ?? formatTime(iso));
}

export function dateElement(iso) {
  return iso ? timeElement(iso, formatDate(iso)) : "";
}

export function formatBytes(value) {
  let amount = count(value);
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let unit = 0;
  while (amount >= 1024 && unit < units.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  return `${decimalFormat.format(amount)} ${units[unit]}`;
}

export function formatMillicores(value) {
  return `${decimalFormat.format(count(value) / 1000)} CPU`;
}
