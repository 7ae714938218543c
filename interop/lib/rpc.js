// RPC (docs/protocol.md, 3-5): requests, replies, error replies, outcomes,
// claim-checked requests and replies, for a caller and a responder.
import { randomBytes } from "node:crypto";
import { createInbox, headers } from "@nats-io/nats-core";
import * as cc from "./claimcheck.js";
import { hget, hhas, limitOf, msgSize } from "./wire.js";

export const HeaderTimeout = "Natssend-Timeout";
export const HeaderOperationID = "Natssend-Operation-Id";
export const HeaderMaxPayload = "Natssend-Max-Payload";
export const HeaderAccept = "Natssend-Accept-Claim-Check";
export const HeaderOutcome = "Natssend-Outcome";
export const HeaderErrorCode = "Nats-Service-Error-Code";
export const HeaderError = "Nats-Service-Error";

export const NotRun = "not run", Rejected = "rejected", Unknown = "unknown";

// RpcError is a call's error: a code and an outcome (4).
export class RpcError extends Error {
  constructor(code, outcome, message = "") {
    super(`${code} (${outcome}): ${message}`);
    this.code = code;
    this.outcome = outcome;
    this.detail = message;
  }
}

// Reject is what a handler throws to refuse a request without effect.
export const reject = (code, message) => Object.assign(new RpcError(code, Rejected, message), { rejected: true });

// remoteError classifies an error reply (4), or returns null.
export function remoteError(h) {
  if (!hhas(h, HeaderErrorCode) && !hhas(h, HeaderError)) return null;
  const code = hget(h, HeaderErrorCode) || "INTERNAL";
  let outcome = Unknown;
  if (hget(h, HeaderOutcome) === "rejected" || code === "INVALID_ARGUMENT" || /^4[0-9]{2}$/.test(code)) outcome = Rejected;
  if (code === "PAYLOAD_TOO_LARGE" || code === "INTERNAL") outcome = Unknown;
  return new RpcError(code, outcome, hget(h, HeaderError));
}

// isNoResponders: the server's 503 status reply (3).
export const isNoResponders = (m) => m.headers?.code === 503 && (!m.data || m.data.length === 0);

// parseAccept reads the accept header's parameters (5.1).
export function parseAccept(v) {
  if (!v) return null;
  const [bucket, ...params] = v.split(";");
  const a = { bucket: bucket.trim(), reads: [] };
  for (const p of params) {
    const i = p.indexOf("=");
    if (i < 0) continue;
    const k = p.slice(0, i).trim(), val = p.slice(i + 1).trim();
    if (k === "domain") a.domain = val;
    else if (k === "reads") a.reads = val.split(",");
    else if (k === "max-payload" && /^[1-9][0-9]*$/.test(val)) a.maxPayload = Number(val);
    else if (k === "reply-key") a.replyKey = val;
  }
  return a;
}

// call sends one request and returns {data, headers}, or throws an
// RpcError (3-5). stores: a claim-check store (the caller then accepts
// claim-checked replies and claim-checks a request over its limit).
export async function call(nc, subject, data, { timeout = 10000, stores = null, opId = "", hdrs = null, maxPayload = limitOf(nc) } = {}) {
  const h = headers();
  if (hdrs) for (const k of hdrs.keys()) for (const v of hdrs.values(k)) h.append(k, v);
  h.set(HeaderTimeout, String(Math.max(1, Math.ceil(timeout))));
  if (opId) h.set(HeaderOperationID, opId);
  if (stores) {
    const key = randomBytes(16).toString("hex");
    h.set(HeaderAccept, `${stores.bucket}; domain=${stores.domain}; max-payload=${maxPayload}; reply-key=${key}`);
  } else {
    h.set(HeaderMaxPayload, String(maxPayload));
  }
  let body = data, ref = null;
  if (msgSize(h, data) > limitOf(nc)) {
    if (!stores) throw new RpcError("PAYLOAD_TOO_LARGE", NotRun, `request of ${msgSize(h, data)} bytes over ${limitOf(nc)}`);
    ref = await cc.store(stores, subject, data, { chunk: cc.chunkFor(limitOf(nc)) });
    for (const k of ref.keys()) h.set(k, ref.get(k));
    body = new Uint8Array(0);
    if (msgSize(h, body) > limitOf(nc)) throw new RpcError("PAYLOAD_TOO_LARGE", NotRun, "the reference does not fit");
  }
  const inbox = createInbox();
  const sub = nc.subscribe(inbox, { max: 1, timeout });
  try {
    nc.publish(subject, body, { reply: inbox, headers: h });
    let m;
    try {
      for await (const msg of sub) { m = msg; break; }
    } catch (err) {
      throw new RpcError("DEADLINE_EXCEEDED", Unknown, err.message);
    }
    if (!m) throw new RpcError("DEADLINE_EXCEEDED", Unknown, "no reply");
    if (isNoResponders(m)) throw new RpcError("NO_RESPONDERS", NotRun, "no responders");
    const rerr = remoteError(m.headers);
    if (rerr) throw rerr;
    if (!cc.isClaimCheck(m.headers)) return { data: m.data, headers: m.headers };
    if (!stores) throw new RpcError("REPLY_LOST", Unknown, "a claim-checked reply this caller cannot read");
    try {
      return { data: await cc.resolve(stores, m.subject, m.headers, m.data), headers: m.headers };
    } catch (err) {
      throw new RpcError("REPLY_LOST", Unknown, err.message);
    } finally {
      await cc.remove(stores, m.headers).catch(() => {}); // the caller owns the reply's object; TTL is the backstop
    }
  } finally {
    sub.unsubscribe();
    if (ref) await cc.remove(stores, ref).catch(() => {});
  }
}

// errorReply sends an error reply (3).
export function errorReply(nc, req, code, message, rejected) {
  const h = headers();
  h.set(HeaderErrorCode, code);
  h.set(HeaderError, message.slice(0, 1024));
  if (rejected) h.set(HeaderOutcome, "rejected");
  nc.publish(req.reply, new Uint8Array(0), { headers: h });
}

// serve answers requests on subject with fn(data, req, deadline) →
// Uint8Array. stores: claim checks served (5.2, 5.3).
export function serve(nc, subject, fn, { stores = null, queue } = {}) {
  return nc.subscribe(subject, {
    queue,
    callback: async (err, req) => {
      if (err || !req.reply) return;
      try {
        await answer(nc, req, fn, stores);
      } catch (e) {
        errorReply(nc, req, "INTERNAL", String(e.message ?? e), false);
      }
    },
  });
}

async function answer(nc, req, fn, stores) {
  const deadline = Date.now() + (Number(hget(req.headers, HeaderTimeout)) || 10000);
  let data = req.data;
  if (cc.isClaimCheck(req.headers)) {
    if (!stores) return errorReply(nc, req, "CLAIM_CHECK_UNRESOLVED", "this responder does not serve claim checks", true);
    try {
      data = await cc.resolve(stores, req.subject, req.headers, req.data);
    } catch (e) {
      return errorReply(nc, req, "CLAIM_CHECK_UNRESOLVED", e.message, true);
    }
  }
  let out;
  try {
    out = await fn(data, req, deadline);
  } catch (e) {
    if (e instanceof RpcError && e.rejected) return errorReply(nc, req, e.code, e.detail, true);
    return errorReply(nc, req, "INTERNAL", String(e.message ?? e), false);
  }
  const accept = parseAccept(hget(req.headers, HeaderAccept));
  const callerMax = accept?.maxPayload ?? (Number(hget(req.headers, HeaderMaxPayload)) || 0);
  const limit = callerMax > 0 ? Math.min(limitOf(nc), callerMax) : limitOf(nc);
  if (msgSize(null, out) <= limit) return nc.publish(req.reply, out);
  const canRead = accept && stores && (accept.domain === undefined ? accept.bucket === stores.bucket : accept.domain === stores.domain || accept.reads.includes(stores.domain));
  if (!canRead || req.reply.startsWith("_R_.")) {
    return errorReply(nc, req, "PAYLOAD_TOO_LARGE", `reply of ${out.length} bytes exceeds the max_payload of ${limit} bytes and was not sent; the operation may already have completed`, false);
  }
  const named = !!accept.replyKey;
  const name = named ? cc.replyObjectName(accept.replyKey, req.reply) : cc.newName();
  let ref;
  try {
    ref = await cc.store(stores, req.reply, out, { name, chunk: cc.chunkFor(limit), once: named });
  } catch (e) {
    if (named && /wrong last sequence/i.test(String(e.message))) return; // another responder's reply is stored: it answers the call
    return errorReply(nc, req, "INTERNAL", `reply of ${out.length} bytes could not be stored as a claim check (${e.message}) and was not sent; the operation may already have completed`, false);
  }
  try {
    nc.publish(req.reply, new Uint8Array(0), { headers: ref });
  } catch (e) {
    await cc.remove(stores, ref).catch(() => {}); // nothing was sent: nobody can read it
    throw e;
  }
}
