// Every asynchronous answer is sequenced: a counter per request kind, and an answer that arrives after a
// newer request of its kind was sent is dropped, so no stale reading, arrangement or proposal is shown.

export const STALE = Symbol("stale");

export class Sequencer {
  constructor() {
    this.counters = new Map();
  }

  /** Make every answer of `kind` still on its way stale (the state it was asked for has changed). */
  cancel(kind) {
    this.counters.set(kind, (this.counters.get(kind) ?? 0) + 1);
  }

  /**
   * Run `ask()` as the newest request of `kind`. Resolves to its answer, or to STALE when a newer request
   * of the same kind was started (or `cancel(kind)` called) meanwhile; errors of stale requests are dropped too.
   */
  async latest(kind, ask) {
    this.cancel(kind);
    const ticket = this.counters.get(kind);
    try {
      const answer = await ask();
      return this.counters.get(kind) === ticket ? answer : STALE;
    } catch (error) {
      if (this.counters.get(kind) !== ticket) return STALE;
      throw error;
    }
  }
}

/** The page's one state, changed only through `update`; every change is drawn by one `render(state)`. */
export class Store {
  constructor(state, render) {
    this.state = state;
    this.render = render;
    this.listeners = [];
  }

  /** Replace the state with `change(state)` (a new object, never mutated in place) and redraw. */
  update(change) {
    const before = this.state;
    this.state = change(before);
    if (this.state !== before) {
      this.render(this.state, before);
      for (const listener of this.listeners) listener(this.state, before);
    }
  }

  /** Call `listener(state, before)` after each change (to start requests that follow from it). */
  subscribe(listener) {
    this.listeners.push(listener);
  }
}
