/**
 * What one execution environment knows of one counter item (an app's, or one stripe of a busy app's) under one limit.
 * Pure, its clock and dice handed in, so its rules are tested without a store.
 *
 * Two things keep a flooded app's items below DynamoDB's write rate, however many environments the flood reaches:
 *
 * 1. A full window stays full: once this environment has seen the window full (its write refused, or its write
 *    took the last request), it refuses the requests that land on the item until the window ends, without a call.
 *
 * 2. Taking part, halved and doubled (AIMD, as TCP shares a link). A refused write still costs the item a write, so
 *    with one refused write per environment and window an item would take one write per environment a window: about
 *    1,000 a second from 1,000 environments at 1-second windows, DynamoDB's per-item ceiling. So once an environment
 *    has seen the app past its limit, it takes part in each window only with probability `participation`: halved
 *    each time its first call of a window finds the window already spent (other environments fill it without this
 *    one), doubled each time its first call is counted, and grown a little (SIT_OUT_GROWTH) for each window it sits
 *    out. In a window it sits out, it refuses the app without a call.
 *
 *    The growth while sitting out is what keeps every window filled. Without it an environment's chance stood still
 *    while it sat out, so after a run of unlucky windows a few environments could all sit out together, their
 *    chances frozen low, and a window went under-filled (one second in six accepted 4 of 10, with 4 environments
 *    flooding as fast as they could). With it, taking part settles where halving and growth balance: with E
 *    environments and a window of c requests, about 2c + E/64 of them take part (c first calls counted, the rest
 *    refused), and never fewer than all of them while they number less than 2c. So a window is left to nobody only
 *    with a chance of about e^-(2c): never, in practice. An item then takes its c counted writes plus about 2c + E/64
 *    refused ones, plus one write from each environment the flood newly reaches (docs/configuration.md states the
 *    bound).
 *
 *    It ends as soon as the flood stops reaching this environment: after a quiet spell (no request of the app here
 *    for a whole window, and at least 2 s), the environment takes part again in every window. A calm app (never past
 *    its limit) never sits out a window. The price: for up to 2 s after a flood stops, a request that lands on an
 *    environment sitting out the window is refused though the window may have room; `Retry-After` sends it to the
 *    next window.
 */

/** The least chance of taking part in a window, so an environment still asks now and then during a long flood. */
export const MIN_PARTICIPATION = 1 / 256;
/**
 * What the chance of taking part grows by for each window sat out: 2^(1/64), so 64 windows sat out double it. Small,
 * so the environments taking part number about 2c + E/64 (E environments, c the window's capacity); large enough that
 * a chance knocked down by a run of windows found spent comes back within a minute of one-second windows.
 */
export const SIT_OUT_GROWTH = 2 ** (1 / 64);
/** A quiet spell: no request of the app here for this long (and a whole window) ends its flood. */
export const QUIET_MS = 2_000;

export class CounterView {
  /** The latest window seen full. */
  private fullWindow = -Infinity;
  /** The latest window whose item the store throttled with nothing to explain it, and the store's error. */
  private throttledWindow = -Infinity;
  private throttleError = '';
  /** Whether the app has been seen past its limit here since its requests last paused. */
  private flooded = false;
  /** The chance of taking part in a window, while flooded. */
  private participation = 1;
  /** The window the last request came in, when, and whether this environment takes part in it. */
  private window = -Infinity;
  private lastRequestAt = -Infinity;
  private takingPart = true;
  /** Whether this window's first call has been made. */
  private calledInWindow = false;

  constructor(private readonly windowLengthMs: number) {}

  /** The environment's chance of taking part in a window (1 unless flooded). */
  get chance(): number {
    return this.flooded ? this.participation : 1;
  }

  /** When the app last sent a request here, epoch milliseconds. */
  get lastSeenAt(): number {
    return this.lastRequestAt;
  }

  /** A request of the app in `window`, at `now`; `roll` draws uniformly from [0, 1). */
  noteRequest(window: number, now: number, roll: () => number): void {
    if (now - this.lastRequestAt > Math.max(this.windowLengthMs, QUIET_MS)) {
      this.flooded = false;
      this.participation = 1;
    }
    this.lastRequestAt = now;
    if (window !== this.window) {
      this.window = window;
      this.calledInWindow = false;
      this.takingPart = !this.flooded || roll() < this.participation;
      if (!this.takingPart) this.participation = Math.min(1, this.participation * SIT_OUT_GROWTH);
    }
  }

  /** Whether the current window is known to be spent: the request is refused without a call. */
  knownFull(window: number): boolean {
    return this.fullWindow === window;
  }

  /** Whether this environment sits out the current window: the request is refused without a call. */
  sitsOut(): boolean {
    return !this.takingPart;
  }

  /**
   * The store's error when it throttled the item earlier in `window` with nothing to explain it: the request
   * is then answered as the store failing, without asking again until the window ends (asking again would only add
   * to a hot item's load, or learn nothing from a throttled table).
   */
  knownThrottled(window: number): string | undefined {
    return this.throttledWindow === window ? this.throttleError : undefined;
  }

  /** Before a call: whether it is the window's first (the one whose outcome sets the participation). */
  beginCall(): boolean {
    const first = !this.calledInWindow;
    this.calledInWindow = true;
    return first;
  }

  /** The call counted the request and the item now holds `used` of `capacity`. */
  counted(window: number, used: number, capacity: number, firstCall: boolean): void {
    if (firstCall) this.participation = Math.min(1, this.participation * 2);
    if (used >= capacity) this.sawFull(window);
  }

  /** The call was refused: the window was full. */
  full(window: number, firstCall: boolean): void {
    if (firstCall) this.participation = Math.max(MIN_PARTICIPATION, this.participation / 2);
    this.sawFull(window);
  }

  /**
   * The store throttled the call. If this environment saw the window full in this window or the one before, the
   * item is busy with its own app's refusals and the throttle counts as full: a refusal, not a failure (returns
   * true). Otherwise nothing here explains it (a whole table throttled, or a neighbour's heat on the same
   * partition), and it is the store failing for this item until the window ends (returns false): a calm app is
   * never refused for another app's flood.
   */
  throttled(window: number, firstCall: boolean, error: string): boolean {
    if (this.fullWindow >= window - 1) {
      this.full(window, firstCall);
      return true;
    }
    this.throttledWindow = window;
    this.throttleError = error;
    return false;
  }

  private sawFull(window: number): void {
    this.fullWindow = window;
    this.flooded = true;
  }
}
