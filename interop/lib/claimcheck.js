// Claim checks (docs/protocol.md, 2): references, objects, reading, deleting.
import { createHash, randomBytes } from "node:crypto";
import { headers } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { hget, hhas, hvalues } from "./wire.js";

export const HeaderRef = "Claim-Check";
export const HeaderSize = "Claim-Check-Size";
export const HeaderBucket = "Claim-Check-Bucket";
export const HeaderDomain = "Claim-Check-Domain";
export const MetaSubject = "claim-check-subject";
export const MaxSize = 256 * 1024 * 1024;

// CodedError carries a code of docs/protocol.md, 4.
export class CodedError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.code = code;
  }
}

const alphabet = "abcdefghijklmnopqrstuvwxyz234567";

// base32 is lowercase base32 without padding (2.3).
export function base32(bytes) {
  let out = "", bits = 0, value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

// newName is an object name: 128 random bits (2.3).
export const newName = () => base32(randomBytes(16));

// validName checks the form of 2.3.
export const validName = (n) => /^[a-z2-7]{26}$/.test(n);

// replyObjectName is the name of a claim-checked reply (5.3, version 2).
export function replyObjectName(replyKey, replySubject) {
  const sum = createHash("sha256").update(`natssend reply\x00${replyKey}\x00${replySubject}`).digest();
  return base32(sum.subarray(0, 16));
}

// isClaimCheck: a message with either reference header (2.1).
export const isClaimCheck = (h) => hhas(h, HeaderRef) || hhas(h, HeaderSize);

// parseRef validates a reference (2.1, 2.3) before anything is read.
export function parseRef(h, bodyLen) {
  const one = (k) => {
    const v = hvalues(h, k);
    if (v.length > 1) throw new CodedError("DATA_LOSS", `${v.length} ${k} headers`);
    return v.length ? v[0] : undefined;
  };
  const name = one(HeaderRef), size = one(HeaderSize);
  if (name === undefined || size === undefined) throw new CodedError("DATA_LOSS", "a reference needs both Claim-Check and Claim-Check-Size");
  if (!validName(name)) throw new CodedError("DATA_LOSS", `object name ${JSON.stringify(name)} is not of the specified form`);
  if (!/^(0|[1-9][0-9]{0,9})$/.test(size)) throw new CodedError("DATA_LOSS", `size ${JSON.stringify(size)}`);
  if (bodyLen !== 0) throw new CodedError("DATA_LOSS", `a reference with a ${bodyLen}-byte body`);
  const n = Number(size);
  if (n > MaxSize) throw new CodedError("PAYLOAD_TOO_LARGE", `declared size ${n}`);
  const bucket = one(HeaderBucket), domain = one(HeaderDomain);
  if (bucket !== undefined && !/^[A-Za-z0-9_-]{1,255}$/.test(bucket)) throw new CodedError("DATA_LOSS", `bucket ${bucket}`);
  if (domain !== undefined && (domain === "" || /[.\s*>]/.test(domain))) throw new CodedError("DATA_LOSS", `domain ${domain}`);
  return { name, size: n, bucket, domain };
}

// Stores reads and writes objects for one connection: its own bucket and
// domain, and the other domains it may read (2.6 step 2).
export class Stores {
  constructor(nc, { bucket = "claim_checks", domain = "", reads = [] } = {}) {
    this.nc = nc;
    this.bucket = bucket;
    this.domain = domain;
    this.reads = reads;
    this.open = new Map();
  }

  // at returns the object store of bucket in domain ("" the own domain).
  async at(bucket, domain = "") {
    const key = `${domain}/${bucket}`;
    if (!this.open.has(key)) {
      const js = jetstream(this.nc, domain ? { domain } : {});
      this.open.set(key, new Objm(js).open(bucket));
    }
    return this.open.get(key);
  }

  // where returns the bucket and domain a reference names (2.1, 2.6).
  where(ref) {
    const bucket = ref.bucket ?? this.bucket;
    let domain = ref.domain ?? this.domain;
    if (domain === this.domain) domain = this.domain;
    else if (!this.reads.includes(domain)) throw new CodedError("PERMISSION_DENIED", `domain ${domain} is not one this reader may read`);
    return { bucket, domain: domain === this.domain ? this.domain : domain };
  }
}

// resolve returns the payload of the claim check received on subject
// (2.6), checking binding, size, chunks and the SHA-256 digest.
export async function resolve(stores, subject, h, body, { binding = true } = {}) {
  const ref = parseRef(h, body ? body.length : 0);
  const { bucket, domain } = stores.where(ref);
  let os;
  try {
    os = await stores.at(bucket, domain);
  } catch (err) {
    throw new CodedError("NOT_FOUND", `bucket ${bucket}: ${err.message}`);
  }
  const info = await os.info(ref.name);
  if (!info || info.deleted) throw new CodedError("NOT_FOUND", `object ${ref.name} is not in bucket ${bucket}`);
  const bound = info.metadata?.[MetaSubject];
  if (binding && bound !== subject) throw new CodedError("DATA_LOSS", `bound to subject ${JSON.stringify(bound ?? "")}, received on ${JSON.stringify(subject)}`);
  if (info.options?.link) throw new CodedError("DATA_LOSS", "the object is a link");
  if (info.size !== ref.size) throw new CodedError("DATA_LOSS", `Claim-Check-Size says ${ref.size}, the object has ${info.size}`);
  if (info.size > 0 && (info.chunks === 0 || info.chunks > info.size)) throw new CodedError("DATA_LOSS", `${info.chunks} chunks for ${info.size} bytes`);
  const r = await os.get(ref.name);
  if (!r) throw new CodedError("NOT_FOUND", `object ${ref.name} went away`);
  const parts = [];
  for await (const c of r.data) parts.push(c);
  const err = await r.error;
  if (err) throw new CodedError("DATA_LOSS", err.message);
  const data = Buffer.concat(parts);
  if (data.length !== info.size) throw new CodedError("DATA_LOSS", `read ${data.length} bytes, the object has ${info.size}`);
  const want = "SHA-256=" + createHash("sha256").update(data).digest("base64url");
  if (info.digest.replace(/=+$/, "") !== want) throw new CodedError("DATA_LOSS", "SHA-256 digest mismatch");
  return new Uint8Array(data.buffer, data.byteOffset, data.length);
}

// store writes data as an object bound to subject and returns the
// reference headers (2.1-2.4). chunk: the chunk size (2.5); unset, the
// object store's own (min(max_payload, 128 KiB)). once: only while no
// object of the name is stored (5.3: the meta message is published with
// Nats-Expected-Last-Subject-Sequence: 0; on refusal the object store
// purges the chunks and put throws).
export async function store(stores, subject, data, { name = newName(), chunk, bucket = stores.bucket, once = false } = {}) {
  const os = await stores.at(bucket, stores.domain);
  const meta = { name, metadata: { [MetaSubject]: subject } };
  if (chunk) meta.options = { max_chunk_size: chunk };
  await os.putBlob(meta, data, once ? { previousRevision: 0 } : undefined);
  const h = headers();
  h.set(HeaderRef, name);
  h.set(HeaderSize, String(data.length));
  h.set(HeaderBucket, bucket);
  if (stores.domain) h.set(HeaderDomain, stores.domain);
  return h;
}

// remove deletes the object a reference names (2.7); a missing one is
// already deleted.
export async function remove(stores, h) {
  const ref = parseRef(h, 0);
  const { bucket, domain } = stores.where(ref);
  const os = await stores.at(bucket, domain);
  const info = await os.info(ref.name);
  if (info && !info.deleted) await os.delete(ref.name);
}

// chunkFor is the chunk size a natssend writer uses for a limit (2.5).
export const chunkFor = (limit) => Math.min(limit - Math.min(Math.floor(limit / 16), 512), 128 * 1024);
