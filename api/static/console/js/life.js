// A page's lifetime: the router makes one for each page it opens and ends it when the
// page is left (another page opened, the same one shown again, the sign-out) or dropped
// (it ended loading after the person moved on). What a page keeps running (a live
// stream, a timer) is tied to it, so nothing of a page outlives it: no stream left open
// toward the account's `events_max_streams`, no timer calling the server for a page
// nobody sees. The page's element leaving the document is not watched for this.

export class PageLife {
  #controller = new AbortController();
  #waiting = [];
  #shown = false;

  /** Aborted when the page ends: hand it to fetch, or listen to its "abort". */
  get signal() { return this.#controller.signal; }

  get ended() { return this.#controller.signal.aborted; }

  /** Run `fn` once the page is shown (now, if it is): never for a page dropped or left
   * before that, so a dropped page opens nothing. */
  whenShown(fn) {
    if (this.ended) return;
    if (this.#shown) fn();
    else this.#waiting.push(fn);
  }

  /** `fn` every `ms` while the page lives (never, once it ended). */
  every(ms, fn) {
    if (this.ended) return;
    const timer = setInterval(fn, ms);
    this.#onEnd(() => clearInterval(timer));
  }

  /** `fn` once after `ms`, unless the page ends first. */
  after(ms, fn) {
    if (this.ended) return;
    const timer = setTimeout(fn, ms);
    this.#onEnd(() => clearTimeout(timer));
  }

  /** For the router: the page is in the document now. */
  shown() {
    if (this.ended) return;
    this.#shown = true;
    this.#waiting.splice(0).forEach((fn) => fn());
  }

  /** For the router: the page is left or dropped; everything tied to it stops. */
  end() {
    this.#waiting = [];
    this.#controller.abort();
  }

  #onEnd(fn) {
    this.signal.addEventListener("abort", fn, { once: true });
  }
}
