// Sizes as a NATS server counts them (docs/protocol.md, 1).
import { Match } from "@nats-io/nats-core";

const enc = new TextEncoder();

// headerSize is the header block's size: 12 + Σ(len(key)+2+len(value)+2),
// values trimmed; 0 without headers.
export function headerSize(h) {
  if (!h) return 0;
  let n = 0, any = false;
  for (const k of h.keys()) {
    for (const v of h.values(k)) {
      any = true;
      n += enc.encode(k).length + enc.encode(String(v).trim()).length + 4;
    }
  }
  return any ? 12 + n : 0;
}

// msgSize is what the server compares with max_payload.
export function msgSize(h, body) {
  return headerSize(h) + (body ? body.length : 0);
}

// hget reads a header in any case (peers canonicalize keys differently).
export function hget(h, key) {
  return h ? h.get(key, Match.IgnoreCase) : "";
}

// hvalues returns every value of a header, in any case.
export function hvalues(h, key) {
  return h ? h.values(key, Match.IgnoreCase) : [];
}

// hhas reports whether the header is present, in any case.
export function hhas(h, key) {
  return h ? h.has(key, Match.IgnoreCase) : false;
}

// limitOf is the connection's limit: the server's max_payload.
export function limitOf(nc) {
  return nc.info?.max_payload ?? 1024 * 1024;
}

export const utf8 = (s) => enc.encode(s);
export const text = (b) => new TextDecoder().decode(b);
