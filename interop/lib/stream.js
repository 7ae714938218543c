// Transfer streams (docs/protocol.md, 6): a caller (ReplyStream) and a
// responder (serveStream), SHA-256 only (a peer that does not offer
// hw256 never gets it).
import { createHash } from "node:crypto";
import { createInbox, headers } from "@nats-io/nats-core";
import * as cc from "./claimcheck.js";
import * as rpc from "./rpc.js";
import { hget, limitOf } from "./wire.js";

export const HeaderStream = "Natssend-Stream";
export const S = 0x53, D = 0x44, E = 0x45, X = 0x58, B = 0x42, A = 0x41, R = 0x52, C = 0x43;
const MaxOffset = 2n ** 63n - 1n;

export const startCredit = (window) => Math.max(1, Math.min(window, 4 << 20));
export const quantum = (window) => Math.max(1, Math.floor(startCredit(window) / 4));
export const beatEvery = (idle) => Math.max(idle / 5, 5);
export const resendInterval = (idle) => Math.min(250, Math.max(beatEvery(idle), 20));

// frame builds a frame body: kind, 8-byte big-endian offset, payload.
export function frame(kind, off, payload = new Uint8Array(0)) {
  const b = new Uint8Array(9 + payload.length);
  b[0] = kind;
  new DataView(b.buffer).setBigUint64(1, BigInt(off));
  b.set(payload, 9);
  return b;
}

// parse reads a frame or control message's kind and offset; null when
// shorter than the prefix or the offset is 2^63 or more.
function parse(b) {
  if (!b || b.length < 9) return null;
  const off = new DataView(b.buffer, b.byteOffset, b.length).getBigUint64(1);
  if (off > MaxOffset) return null;
  return { kind: b[0], off: Number(off), payload: b.subarray(9) };
}

export class StreamError extends Error {
  constructor(code, outcome, message) {
    super(`${code} (${outcome}): ${message}`);
    this.code = code;
    this.outcome = outcome;
  }
}
const broken = (msg) => new StreamError("STREAM_BROKEN", rpc.Unknown, msg);

// ReplyStream is the caller's side: frames in order, gaps and resends,
// acks and credit, keepalive and the idle bound (6.2-6.6). drop(kind,
// off, n) → true simulates the loss of a frame (tests only).
export class ReplyStream {
  constructor(nc, { window = 64 << 20, idle = 10000, drop = null } = {}) {
    Object.assign(this, { nc, window, idle, drop });
    this.inbox = createInbox();
    this.recv = 0; this.consumed = 0; this.maxGrant = startCredit(window); this.cur = startCredit(window);
    this.ackRecv = 0; this.ackUsed = 0; this.nAck = 0;
    this.ctrl = null; this.lastReply = null; this.started = false; this.ended = false; this.err = null;
    this.want = -1; this.wantAt = 0; this.lostAt = 0; this.lastRx = Date.now();
    this.sha = createHash("sha256"); this.queue = []; this.resends = 0; this.digestByte = undefined;
    this.wake = null;
    this.opened = new Promise((res, rej) => { this.openOK = res; this.openFail = rej; });
    this.sub = nc.subscribe(this.inbox, { callback: (_, m) => this.onMsg(m) });
  }

  // control sends a control message to the latest frame's reply subject
  // (6.3: ⚑ version 2; the same subject as the first frame's in version 1).
  control(body) {
    if (this.lastReply) this.nc.publish(this.lastReply, body);
  }

  ack(final) {
    const grant = this.consumed + this.cur;
    this.maxGrant = Math.max(this.maxGrant, grant);
    const b = new Uint8Array(18);
    const v = new DataView(b.buffer);
    b[0] = A; v.setBigUint64(1, BigInt(this.recv)); v.setBigUint64(9, BigInt(grant)); b[17] = final ? 1 : 0;
    this.control(b);
    this.ackRecv = this.recv; this.ackUsed = this.consumed; this.nAck = 0;
  }

  gap() {
    const now = Date.now();
    if (this.want === this.recv && now - this.wantAt < resendInterval(this.idle)) return;
    if (this.want !== this.recv) this.lostAt = now;
    this.want = this.recv; this.wantAt = now; this.resends++;
    const b = new Uint8Array(10);
    b[0] = R; new DataView(b.buffer).setBigUint64(1, BigInt(this.recv)); b[9] = this.started ? 0 : 1;
    this.control(b);
  }

  fail(err) {
    if (this.err || this.ended) return;
    this.err = err;
    try { if (this.ctrl) this.control(Uint8Array.of(C)); } catch { /* the connection is gone too */ }
    this.stop();
    this.openFail(err);
  }

  stop() {
    clearInterval(this.timer);
    this.sub.unsubscribe();
    this.notify();
  }

  notify() {
    if (this.wake) { const w = this.wake; this.wake = null; w(); }
  }

  onMsg(m) {
    const f = parse(m.data);
    if (!m.reply || (!f && m.reply !== this.ctrl)) return this.plain(m);
    if (this.err || this.ended) return;
    if (this.ctrl && m.reply !== this.ctrl) return this.nc.publish(m.reply, Uint8Array.of(C)); // a second responder
    if (!this.ctrl) this.ctrl = m.reply;
    this.lastReply = m.reply;
    if (!f) return this.fail(broken("a frame shorter than its prefix, or with an offset of 2^63 or more"));
    const bad = this.check(f);
    if (bad) return this.fail(broken("the responder broke the stream protocol: " + bad));
    if (this.drop && f.kind === D && this.drop(f.kind, f.off, f.payload.length)) return;
    this.lastRx = Date.now();
    if (!this.started) {
      if (f.kind !== S) return this.gap();
      if (f.payload.length > 0 && f.payload[0] !== 1) return this.fail(broken(`a start frame of version ${f.payload[0]}`));
      this.digestByte = f.payload.length > 1 ? f.payload[1] : undefined;
      if ((this.digestByte ?? 0) !== 0) return this.fail(broken(`a start frame naming digest ${this.digestByte}, which the caller did not offer`));
      this.started = true; this.headers = m.headers;
      this.timer = setInterval(() => {
        try { this.keepalive(); } catch (e) { this.fail(broken(e.message)); }
      }, beatEvery(this.idle));
      this.ack(false);
      return this.openOK(this);
    }
    switch (f.kind) {
      case D: {
        const end = f.off + f.payload.length;
        if (f.off > this.recv) return this.gap();
        if (end <= this.recv) return; // a duplicate from a resend
        const data = f.payload.slice(this.recv - f.off);
        this.sha.update(data);
        this.queue.push(data);
        this.recv = end; this.want = -1; this.nAck++;
        if (this.recv - this.ackRecv >= quantum(this.window) || this.nAck >= 64) this.ack(false);
        return this.notify();
      }
      case E:
        if (f.off > this.recv) return this.gap();
        if (!Buffer.from(this.sha.digest()).equals(Buffer.from(f.payload))) this.endErr = broken("the stream's SHA-256 digest does not match the bytes received");
        return this.end();
      case X:
        if (f.off > this.recv) return this.gap();
        this.endErr = rpc.remoteError(m.headers) ?? new StreamError("INTERNAL", rpc.Unknown, "the responder failed mid-stream");
        return this.end();
      case B:
        if (f.off > this.recv || f.payload[0] === 1) this.gap(); // frames, or the end, lost at the tail
    }
  }

  // check applies 6.6's rules to a frame of the stream's responder.
  check({ kind, off, payload }) {
    if (![S, D, E, X, B].includes(kind)) return `a frame of unknown kind ${kind}`;
    const end = kind === D ? off + payload.length : off;
    if (kind === S && off !== 0) return `a start frame at offset ${off}`;
    if (end > this.maxGrant) return `a frame up to offset ${end}, beyond the credit granted (${this.maxGrant})`;
    if (kind !== D && kind !== S && off < this.recv) return `a frame of kind ${String.fromCharCode(kind)} at offset ${off}, below the ${this.recv} bytes delivered`;
    if (kind === E && off === this.recv && payload.length !== 32) return `an end frame with a ${payload.length}-byte digest`;
    return "";
  }

  end() {
    this.ended = true;
    this.ack(true);
    this.stop();
  }

  // plain handles a message that is not a frame: before the start, the
  // answer to the request (6.2).
  plain(m) {
    if (this.started || this.err) return;
    let err;
    if (rpc.isNoResponders(m)) err = new StreamError("NO_RESPONDERS", rpc.NotRun, "no responders");
    else err = rpc.remoteError(m.headers) ?? new StreamError("INTERNAL", rpc.Unknown, "a plain reply, not a stream");
    this.err = err;
    this.stop();
    this.openFail(err);
  }

  keepalive() {
    if (this.ended || this.err) return;
    const now = Date.now();
    if (now - this.lastRx > this.idle) return this.fail(broken("no frame or heartbeat within the idle bound"));
    if (this.want === this.recv && now - this.lostAt > this.idle) return this.fail(broken("frames lost and not sent again"));
    if (this.want === this.recv) this.gap();
    this.ack(false);
  }

  // Async iteration yields the body's pieces; it throws the stream's
  // error, or the end's (a digest mismatch, an error frame).
  async *[Symbol.asyncIterator]() {
    for (;;) {
      if (this.queue.length) {
        const d = this.queue.shift();
        this.consumed += d.length;
        if (!this.ended && !this.err && this.consumed - this.ackUsed >= quantum(this.window)) this.ack(false);
        yield d;
        continue;
      }
      if (this.err) throw this.err;
      if (this.ended) {
        if (this.endErr) throw this.endErr;
        return;
      }
      await new Promise((r) => { this.wake = r; });
    }
  }

  close() {
    if (!this.ended && !this.err) { this.control(Uint8Array.of(C)); this.err = broken("closed"); this.stop(); }
  }
}

// requestStream sends a stream request and returns the ReplyStream once
// its start frame arrived (or throws the answer that came instead).
export async function requestStream(nc, subject, data, { window = 64 << 20, idle = 10000, first = 10000, timeout = 120000, maxPayload = limitOf(nc), drop = null } = {}) {
  const rs = new ReplyStream(nc, { window, idle, drop });
  const h = headers();
  h.set(rpc.HeaderTimeout, String(timeout));
  h.set(rpc.HeaderMaxPayload, String(maxPayload));
  h.set(HeaderStream, `1 ${window} ${idle} ${first}`);
  nc.publish(subject, data, { reply: rs.inbox, headers: h });
  const t = setTimeout(() => rs.fail(new StreamError("DEADLINE_EXCEEDED", rpc.Unknown, "no first frame")), first);
  try {
    return await rs.opened;
  } finally {
    clearTimeout(t);
  }
}

// parseMarker reads Natssend-Stream (6.1), or null.
export function parseMarker(v) {
  const f = (v ?? "").trim().split(/\s+/);
  if (f.length < 3 || f[0] !== "1" || !/^[0-9]+$/.test(f[1]) || !/^[0-9]+$/.test(f[2])) return null;
  const window = Number(f[1]), idle = Number(f[2]);
  if (window < 1 || window > 1 << 30 || idle < 1 || idle > 600000) return null;
  return { window, idle, digests: (f[4] ?? "").split(",") };
}

// StreamOut is the responder's side: credit, held frames, resends,
// heartbeats, the end (6.2-6.6). drop(kind, off, n) → true: do not
// publish this frame the first time (a loss, tests only).
export class StreamOut {
  constructor(nc, inbox, { window, idle }, limit, { drop = null } = {}) {
    Object.assign(this, { nc, inbox, window, idle, limit, drop });
    this.ctrl = createInbox();
    this.headers = headers();
    this.sent = 0; this.acked = 0; this.granted = startCredit(window);
    this.frames = []; this.startFrame = null; this.started = false; this.ended = false; this.final = false;
    this.broken = null; this.gone = null; this.lastCtl = Date.now(); this.lastSend = 0;
    this.resentAt = 0; this.resentTo = 0; this.resentAcked = 0; this.repeats = 0;
    this.waiters = [];
    this.frameCap = Math.min(limit - 9, Math.max(quantum(window), 32 << 10));
    this.dropped = new Set();
  }

  publish(f) {
    if (this.drop && !this.dropped.has(f.off + ":" + f.body[0]) && this.drop(f.body[0], f.off, f.body.length - 9)) {
      this.dropped.add(f.off + ":" + f.body[0]);
      return;
    }
    this.nc.publish(this.inbox, f.body, { reply: this.ctrl, headers: f.headers });
    this.lastSend = Date.now();
  }

  start() {
    this.sub = this.nc.subscribe(this.ctrl, { callback: (_, m) => this.onCtl(m) });
    this.startFrame = { off: 0, body: frame(S, 0, Uint8Array.of(1)), headers: this.headers.keys().length ? this.headers : undefined };
    this.started = true;
    this.publish(this.startFrame);
    this.timer = setInterval(() => {
      try { this.beat(); } catch (e) { this.gone = broken(e.message); this.stop(); }
    }, beatEvery(this.idle));
  }

  wakeAll() {
    const w = this.waiters;
    this.waiters = [];
    for (const r of w) r();
  }

  onCtl(m) {
    if (rpc.isNoResponders(m)) { this.goneAt ??= Date.now(); return; }
    if (this.broken) return;
    const bad = this.ctl(m.data);
    if (bad) {
      this.broken = broken("the caller broke the stream protocol: " + bad);
      this.frames = [];
      this.stop();
      return;
    }
    this.lastCtl = Date.now(); this.goneAt = undefined;
    this.wakeAll();
  }

  // ctl applies one control message (6.3, 6.5), or says what breaks the rules (6.6).
  ctl(b) {
    if (!b || b.length === 0) return "an empty control message";
    const v = new DataView(b.buffer, b.byteOffset, b.length);
    switch (b[0]) {
      case A: {
        if (b.length !== 18 || b[17] > 1) return `a malformed acknowledgement (${b.length} bytes)`;
        const recv = v.getBigUint64(1), grant = v.getBigUint64(9), final = b[17] === 1;
        if (recv > BigInt(this.sent)) return `an acknowledgement of ${recv} bytes, ${this.sent} sent`;
        if (grant > MaxOffset || grant - recv > BigInt(this.window)) return `credit up to offset ${grant}, beyond the ${this.window}-byte window past ${recv}`;
        if (final && (!this.ended || Number(recv) !== this.sent)) return `a final acknowledgement of ${recv} bytes before the end at ${this.sent}`;
        this.startFrame = null;
        this.granted = Math.max(this.granted, Number(grant));
        if (Number(recv) > this.acked) {
          this.acked = Number(recv);
          this.frames = this.frames.filter((f) => !(f.body[0] === D && f.off + f.body.length - 9 <= this.acked));
        }
        this.final ||= final;
        return "";
      }
      case R: {
        if (b.length !== 10 || b[9] > 1) return `a malformed resend request (${b.length} bytes)`;
        const from = v.getBigUint64(1);
        if (from > BigInt(this.sent)) return `a resend request from offset ${from}, ${this.sent} sent`;
        this.resend(Number(from), b[9] === 1);
        return "";
      }
      case C:
        // [C] the caller closed the stream; [C 0x01] the caller found it broken (6.3).
        if (b.length > 2 || (b.length === 2 && b[1] !== 1)) return `a malformed cancel (${b.length} bytes)`;
        this.gone = b.length === 2
          ? new StreamError("STREAM_BROKEN", rpc.Unknown, "the caller found the stream broken")
          : new StreamError("CANCELED", rpc.Unknown, "the caller closed the stream");
        this.stop();
        return "";
    }
    return `a control message of unknown kind ${b[0]}`;
  }

  resend(from, start) {
    const now = Date.now();
    if (this.resentAt && from <= this.resentTo && this.acked <= this.resentAcked) {
      if (now - this.resentAt < (resendInterval(this.idle) / 2) * 2 ** Math.min(this.repeats, 6)) return;
      this.repeats++;
    } else this.repeats = 0;
    this.resentAt = now; this.resentTo = this.sent; this.resentAcked = this.acked;
    if (start && this.startFrame) this.publish(this.startFrame);
    for (const f of this.frames) {
      const end = f.body[0] === D ? f.off + f.body.length - 9 : f.off;
      if (end > from || (f.body[0] !== D && f.off >= from)) this.publish(f);
    }
  }

  beat() {
    const now = Date.now();
    if (now - this.lastCtl > this.idle || (this.goneAt && now - this.goneAt > this.idle / 2)) {
      this.gone = new StreamError("CANCELED", rpc.Unknown, "the caller is gone");
      return this.stop();
    }
    if (now - this.lastSend >= beatEvery(this.idle)) this.publish({ off: this.sent, body: frame(B, this.sent, Uint8Array.of(this.ended ? 1 : 0)) });
  }

  stop() {
    clearInterval(this.timer);
    this.sub?.unsubscribe();
    this.wakeAll();
  }

  check() {
    if (this.broken) throw this.broken;
    if (this.gone) throw this.gone;
  }

  credit() {
    return Math.min(this.granted, this.acked + Math.min(this.window, 64 << 20)) - this.sent;
  }

  // write sends p in data frames, each once the credit allows all of it
  // or at least a quantum (6.4).
  async write(p) {
    if (!this.started) this.start();
    let off = 0;
    while (off < p.length) {
      this.check();
      const have = Math.min(p.length - off, this.frameCap);
      const credit = this.credit();
      if (credit < Math.min(have, quantum(this.window))) {
        await new Promise((r) => this.waiters.push(r));
        continue;
      }
      const n = Math.min(have, credit);
      const f = { off: this.sent, body: frame(D, this.sent, p.subarray(off, off + n)) };
      this.frames.push(f);
      this.sha ??= createHash("sha256");
      this.sha.update(p.subarray(off, off + n));
      this.sent += n;
      off += n;
      this.publish(f);
    }
  }

  // finish sends the end frame (err null) or the error frame and waits
  // for the caller's final acknowledgement, up to 2 × idle.
  async finish(err) {
    if (!this.started) this.start();
    this.check();
    let f;
    if (!err) {
      f = { off: this.sent, body: frame(E, this.sent, (this.sha ?? createHash("sha256")).digest()) };
    } else {
      const h = headers();
      h.set(rpc.HeaderErrorCode, err.code ?? "INTERNAL");
      h.set(rpc.HeaderError, String(err.detail ?? err.message).slice(0, 1024));
      if (err.rejected) h.set(rpc.HeaderOutcome, "rejected");
      f = { off: this.sent, body: frame(X, this.sent), headers: h };
    }
    this.frames.push(f);
    this.ended = true;
    this.publish(f);
    const until = Date.now() + 2 * this.idle;
    while (!this.final && !this.broken && !this.gone && Date.now() < until) {
      await new Promise((r) => { this.waiters.push(r); setTimeout(r, 50); });
    }
    this.stop();
    this.check();
    if (!this.final) throw broken("the caller did not acknowledge the end");
  }
}

// serveStream answers stream requests on subject with fn(data, req, out):
// fn writes with out.write and sets out.headers before its first write.
// report(result) is told how each stream ended.
export function serveStream(nc, subject, fn, { stores = null, drop = null, report = () => {} } = {}) {
  return nc.subscribe(subject, {
    callback: async (_, req) => {
      if (!req.reply) return;
      const sr = parseMarker(hget(req.headers, HeaderStream));
      if (!sr) return rpc.errorReply(nc, req, "INVALID_ARGUMENT", "not a stream request", true);
      if (req.reply.startsWith("_R_.")) return rpc.errorReply(nc, req, "INVALID_ARGUMENT", "a stream cannot cross an account import", true);
      let data = req.data;
      if (cc.isClaimCheck(req.headers)) {
        try {
          if (!stores) throw new Error("this responder does not serve claim checks");
          data = await cc.resolve(stores, req.subject, req.headers, req.data);
        } catch (e) {
          return rpc.errorReply(nc, req, "CLAIM_CHECK_UNRESOLVED", e.message, true);
        }
      }
      const callerMax = rpc.parseAccept(hget(req.headers, rpc.HeaderAccept))?.maxPayload ?? (Number(hget(req.headers, rpc.HeaderMaxPayload)) || 0);
      const limit = callerMax > 0 ? Math.min(limitOf(nc), callerMax) : limitOf(nc);
      const out = new StreamOut(nc, req.reply, sr, limit, { drop });
      let err = null;
      try {
        await fn(data, req, out);
      } catch (e) {
        err = e;
      }
      if (!out.started && err) {
        if (!out.broken && !out.gone) rpc.errorReply(nc, req, err.code ?? "INTERNAL", String(err.detail ?? err.message), !!err.rejected);
        return report({ error: err.code ?? "INTERNAL" });
      }
      try {
        if (out.broken || out.gone) throw out.broken ?? out.gone;
        await out.finish(err);
        report({ ok: !err, sent: out.sent });
      } catch (e) {
        report({ error: e.code ?? "INTERNAL", message: e.message });
      }
    },
  });
}
