/**
 * `Event`, `EventTarget`, `AbortController` and `AbortSignal` in the guest, as the DOM standard and Node define
 * them: programs written for Node or Workers pass `signal: AbortSignal.timeout(ms)` to fetch and build on
 * EventTarget. A plain string like guest-runtime.ts, evaluated once into the template VM.
 *
 * Its factory takes the runtime's `lib` (`setTimeout`, `now` for time stamps, `reportError` for a listener's
 * throw, which is reported, not thrown, as in browsers) and returns `lib.abortSignal` for fetch: `is(x)` and
 * `follow(signal, fn)`, an abort algorithm that no listener of the guest can see or remove. A timer is a host call
 * like any (journaled in a durable task), so `AbortSignal.timeout` fires at the same point on a replay; a
 * program ends when its main function does, whatever timers are pending.
 */
export const GUEST_EVENTS_SOURCE = String.raw`(function (lib) {
'use strict';
const O = Object, Str = String, TE = TypeError, DOMEx = DOMException, WM = WeakMap;
const { defineProperty, freeze } = O;
const apply = Reflect.apply;
const wmGet = WM.prototype.get, wmSet = WM.prototype.set, wmHas = WM.prototype.has;
const arrayPush = Array.prototype.push, arraySlice = Array.prototype.slice, arraySplice = Array.prototype.splice;
const { setTimeout: setTimer, now, reportError } = lib;

// ---- Event ---------------------------------------------------------------------------------------------------
const EV = new WM();
function ev(e, what) {
  const s = apply(wmGet, EV, [e]);
  if (s === undefined) throw new TE('Illegal invocation' + (what ? ': ' + what + ' needs an Event' : ''));
  return s;
}
class Event {
  constructor(type, init) {
    if (arguments.length === 0) throw new TE('The "type" argument must be specified');
    const o = init === undefined || init === null ? {} : init;
    apply(wmSet, EV, [this, { type: Str(type), bubbles: !!o.bubbles, cancelable: !!o.cancelable, composed: !!o.composed,
      target: null, current: null, phase: 0, canceled: false, stop: false, stopNow: false, passive: false,
      dispatching: false, time: now() }]);
  }
  get type() { return ev(this).type; }
  get target() { return ev(this).target; }
  get srcElement() { return ev(this).target; }
  get currentTarget() { return ev(this).current; }
  get eventPhase() { return ev(this).phase; }
  get bubbles() { return ev(this).bubbles; }
  get cancelable() { return ev(this).cancelable; }
  get composed() { return ev(this).composed; }
  get defaultPrevented() { return ev(this).canceled; }
  get returnValue() { return !ev(this).canceled; }
  set returnValue(v) { if (!v) this.preventDefault(); }
  get cancelBubble() { return ev(this).stop; }
  set cancelBubble(v) { if (v) ev(this).stop = true; }
  get isTrusted() { return false; }
  get timeStamp() { return ev(this).time; }
  composedPath() { const s = ev(this); return s.dispatching ? [s.current] : []; }
  preventDefault() { const s = ev(this); if (s.cancelable && !s.passive) s.canceled = true; }
  stopPropagation() { ev(this).stop = true; }
  stopImmediatePropagation() { const s = ev(this); s.stop = s.stopNow = true; }
  get [Symbol.toStringTag]() { return 'Event'; }
}
for (const [k, v] of [['NONE', 0], ['CAPTURING_PHASE', 1], ['AT_TARGET', 2], ['BUBBLING_PHASE', 3]]) {
  defineProperty(Event, k, { value: v, enumerable: true });
  defineProperty(Event.prototype, k, { value: v, enumerable: true });
}

// ---- EventTarget ---------------------------------------------------------------------------------------------
const LISTENERS = new WM();
function listenersOf(t) {
  const l = apply(wmGet, LISTENERS, [t]);
  if (l === undefined) throw new TE('Illegal invocation: the receiver is not an EventTarget');
  return l;
}
function flatten(options) {
  if (typeof options === 'boolean') return { capture: options, once: false, passive: false, signal: undefined };
  if (options === undefined || options === null || typeof options !== 'object') return { capture: false, once: false, passive: false, signal: undefined };
  const signal = options.signal;
  if (signal !== undefined && !isSignal(signal)) throw new TE('The "options.signal" property must be an AbortSignal');
  return { capture: !!options.capture, once: !!options.once, passive: !!options.passive, signal };
}
function find(list, type, callback, capture) {
  for (let i = 0; i < list.length; i++) {
    const l = list[i];
    if (l.type === type && l.callback === callback && l.capture === capture) return i;
  }
  return -1;
}
function removeListener(target, l) {
  const list = listenersOf(target);
  for (let i = 0; i < list.length; i++) if (list[i] === l) { l.removed = true; apply(arraySplice, list, [i, 1]); return; }
}
class EventTarget {
  constructor() { apply(wmSet, LISTENERS, [this, []]); }
  addEventListener(type, callback, options) {
    const list = listenersOf(this);
    const o = flatten(options);
    if (callback === undefined || callback === null) return;
    if (typeof callback !== 'function' && typeof callback !== 'object') throw new TE('The "listener" argument must be a function or an object');
    if (o.signal !== undefined && sig(o.signal).aborted) return;
    const t = Str(type);
    if (find(list, t, callback, o.capture) >= 0) return;
    const l = { type: t, callback, capture: o.capture, once: o.once, passive: o.passive, removed: false };
    apply(arrayPush, list, [l]);
    if (o.signal !== undefined) follow(o.signal, () => removeListener(this, l));
  }
  removeEventListener(type, callback, options) {
    const list = listenersOf(this);
    const capture = typeof options === 'boolean' ? options : options !== null && typeof options === 'object' && !!options.capture;
    const i = find(list, Str(type), callback, capture);
    if (i >= 0) { list[i].removed = true; apply(arraySplice, list, [i, 1]); }
  }
  dispatchEvent(event) {
    const list = listenersOf(this);
    const s = ev(event, 'dispatchEvent');
    if (s.dispatching) throw new DOMEx('The event is already being dispatched', 'InvalidStateError');
    s.dispatching = true; s.target = this; s.current = this; s.phase = 2;
    const snapshot = apply(arraySlice, list, []);
    for (const l of snapshot) {
      if (s.stopNow) break;
      if (l.removed || l.type !== s.type) continue;
      if (l.once) removeListener(this, l);
      s.passive = l.passive;
      try {
        if (typeof l.callback === 'function') apply(l.callback, this, [event]);
        else { const handle = l.callback.handleEvent; if (typeof handle === 'function') apply(handle, l.callback, [event]); }
      } catch (e) { reportError(e); }
      s.passive = false;
    }
    s.dispatching = false; s.current = null; s.phase = 0; s.stop = s.stopNow = false;
    return !s.canceled;
  }
  get [Symbol.toStringTag]() { return 'EventTarget'; }
}

// ---- AbortSignal, AbortController ------------------------------------------------------------------------------
const SIG = new WM();
let making = false;
function isSignal(x) { return (typeof x === 'object' && x !== null) && apply(wmHas, SIG, [x]); }
function sig(x) {
  const s = apply(wmGet, SIG, [x]);
  if (s === undefined) throw new TE('Illegal invocation: the receiver is not an AbortSignal');
  return s;
}
function makeSignal() {
  making = true;
  try { return new AbortSignal(); } finally { making = false; }
}
/** Runs fn when signal aborts (at once if it has): fetch's and addEventListener's, unseen by the guest. */
function follow(signal, fn) {
  const s = sig(signal);
  if (s.aborted) fn(s.reason); else apply(arrayPush, s.algorithms, [fn]);
}
function abortWith(signal, reason) {
  const s = sig(signal);
  if (s.aborted) return;
  s.aborted = true;
  s.reason = reason === undefined ? new DOMEx('This operation was aborted', 'AbortError') : reason;
  const algorithms = s.algorithms;
  s.algorithms = [];
  for (const fn of algorithms) { try { fn(s.reason); } catch (e) { reportError(e); } }
  const handler = s.onabort;
  const event = new Event('abort');
  if (typeof handler === 'function') {
    // The handler attribute runs as a listener would, first here (it is set before any add, in practice).
    try { apply(handler, signal, [event]); } catch (e) { reportError(e); }
  }
  signal.dispatchEvent(event);
}
class AbortSignal extends EventTarget {
  constructor() {
    if (!making) throw new TE('Illegal constructor');
    super();
    apply(wmSet, SIG, [this, { aborted: false, reason: undefined, algorithms: [], onabort: null }]);
  }
  get aborted() { return sig(this).aborted; }
  get reason() { return sig(this).reason; }
  get onabort() { return sig(this).onabort; }
  set onabort(fn) { sig(this).onabort = typeof fn === 'function' ? fn : null; }
  throwIfAborted() { const s = sig(this); if (s.aborted) throw s.reason; }
  static abort(reason) { const signal = makeSignal(); abortWith(signal, reason); return signal; }
  static timeout(ms) {
    const n = +ms;
    if (!(n >= 0) || n > Number.MAX_SAFE_INTEGER) throw new RangeError('The value of "delay" is out of range. It must be >= 0 && <= ' + Number.MAX_SAFE_INTEGER + '. Received ' + Str(ms));
    const signal = makeSignal();
    setTimer(() => abortWith(signal, new DOMEx('The operation was aborted due to timeout', 'TimeoutError')), n);
    return signal;
  }
  static any(signals) {
    const list = [];
    for (const x of signals) { if (!isSignal(x)) throw new TE('The "signals" argument must contain only AbortSignal instances'); apply(arrayPush, list, [x]); }
    const signal = makeSignal();
    for (const x of list) if (sig(x).aborted) { abortWith(signal, sig(x).reason); return signal; }
    for (const x of list) follow(x, (reason) => abortWith(signal, reason));
    return signal;
  }
  get [Symbol.toStringTag]() { return 'AbortSignal'; }
}
class AbortController {
  #signal = makeSignal();
  get signal() { return this.#signal; }
  abort(reason) { abortWith(this.#signal, reason); }
  get [Symbol.toStringTag]() { return 'AbortController'; }
}

return {
  globals: { Event, EventTarget, AbortController, AbortSignal },
  lib: { abortSignal: freeze({ is: isSignal, follow }) },
};
})`;
