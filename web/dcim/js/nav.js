// The address bar as the page's state: views read their filters, search, order and page from the
// fragment, and a view that changes them in place (a search as you type) writes them back here.
//
// Changing the fragment through `location.hash` makes the router show the view again. Views that
// update only part of the page (the list under a search box) use `setFragment` instead, which
// records the new state with the History API without re-rendering; the back button then returns
// to the earlier state, and the router shows it (a history step between fragments fires
// `hashchange`).

let typingEntry = "";

// Records `fragment` ("#/clusters?q=acme") as the current state. The first change of a burst of typing
// adds a history entry; later ones replace it, so back leaves the search in one step, not one per key.
export function setFragment(fragment, { burst = "" } = {}) {
  if (fragment === window.location.hash) {
    return;
  }
  if (burst && typingEntry === burst) {
    window.history.replaceState(null, "", fragment);
  } else {
    window.history.pushState(null, "", fragment);
  }
  typingEntry = burst;
  document.body.dataset.route = window.location.hash;
}

// Any navigation by the router ends a burst of typing.
export function endBurst() {
  typingEntry = "";
}

// Waits `ms` after the last call before running `action` with the latest arguments.
export function debounce(action, ms) {
  let timer = 0;
  const debounced = (...args) => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => action(...args), ms);
  };
  debounced.cancel = () => window.clearTimeout(timer);
  return debounced;
}
