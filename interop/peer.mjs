// The nats.js peer that make interop runs against natssend's Go side
// (interop_test.go starts the servers and this program, one scenario
// per run). It prints "READY" once subscribed and "RESULT <json>" at the
// end; it exits non-zero on a failure of its own. Everything it does on
// the wire follows docs/protocol.md; nothing here knows the Go code.
import { createHash } from "node:crypto";
import { connect } from "@nats-io/transport-node";
import { headers } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import * as cc from "./lib/claimcheck.js";
import * as rpc from "./lib/rpc.js";
import * as stream from "./peer-stream.mjs";
import { utf8, text, hget, hhas } from "./lib/wire.js";

const sha = (b) => createHash("sha256").update(b).digest("hex");
const json = (o) => utf8(JSON.stringify(o));

// pattern is the test body both sides generate: byte i is (i*7 + i>>13) mod 251.
export function pattern(n, seed = 0) {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + (i >> 13) + seed) % 251;
  return b;
}

const scenarios = {
  // resolve: read Go's claim checks (core NATS, a JetStream stream, other
  // buckets), report each, delete after read on the work subject.
  async resolve(nc) {
    const reads = (process.env.INTEROP_READS ?? "").split(",").filter(Boolean);
    const stores = new cc.Stores(nc, { reads });
    const report = async (subject, h, body, deleteAfterRead) => {
      const r = { subject, expect: hget(h, "Interop-Sha256") };
      try {
        const data = await cc.resolve(stores, subject, h, body);
        r.sha256 = sha(data);
        r.size = data.length;
        if (deleteAfterRead) {
          await cc.remove(stores, h); // single-reader delivery, handled: 2.7
          r.deleted = true;
        }
      } catch (e) {
        r.error = e.code ?? "INTERNAL";
        r.message = e.message;
      }
      nc.publish("interop.results", json(r));
    };
    nc.subscribe("cc.core.>", { callback: (_, m) => report(m.subject, m.headers, m.data, false) });
    nc.subscribe("cc.work.>", { queue: "workers", callback: (_, m) => report(m.subject, m.headers, m.data, true) });
    let msgs = null;
    if (process.env.INTEROP_JS !== "0") {
      const consumer = await jetstream(nc).consumers.get("CCJS"); // ordered
      msgs = await consumer.consume();
      (async () => {
        for await (const m of msgs) await report(m.subject, m.headers, m.data, false);
      })();
    }
    const done = nc.subscribe("interop.done", { max: 1 });
    await nc.flush();
    console.log("READY");
    for await (const _ of done) break;
    await msgs?.close();
    return {};
  },

  // write: claim checks written with nats.js's object store at its own
  // chunk size, per the spec, for Go to resolve.
  async write(nc) {
    const domain = process.env.INTEROP_DOMAIN ?? "";
    const own = new cc.Stores(nc, { domain }); // Go's default bucket
    const mine = new cc.Stores(nc, { bucket: "js_claims", domain });
    await new (await import("@nats-io/obj")).Objm(jetstream(nc)).create("js_claims", { storage: "memory" });
    const sent = [];
    const cases = process.env.INTEROP_CORE_ONLY ? [[own, 200000, "js2go.core"]] : [[own, 200000, "js2go.core"], [mine, 65536 * 3 + 1, "js2go.core"], [mine, 1, "js2go.core"], [own, 0, "js2go.core"], [mine, 150000, "js2go.js"]];
    for (const [stores, size, subject] of cases) {
      const data = pattern(size, sent.length);
      const h = await cc.store(stores, subject, data);
      h.set("Interop-Sha256", sha(data));
      if (subject === "js2go.js") await jetstream(nc).publish(subject, new Uint8Array(0), { headers: h });
      else nc.publish(subject, new Uint8Array(0), { headers: h });
      sent.push({ subject, size, bucket: stores.bucket });
    }
    await nc.flush();
    console.log("READY");
    return { sent };
  },

  // call: every case of Go's responders, with and without claim checks.
  async call(nc) {
    const stores = new cc.Stores(nc);
    const out = [];
    const cases = JSON.parse(process.env.INTEROP_CASES);
    console.log("READY");
    for (const c of cases) {
      const r = { name: c.name };
      try {
        const body = c.size ? pattern(c.size) : utf8(c.body ?? "hello");
        const hdrs = headers();
        const res = await rpc.call(nc, c.subject, body, { timeout: c.timeout ?? 10000, stores: c.accept ? stores : null, maxPayload: c.maxPayload, opId: c.opId, hdrs });
        r.code = "OK";
        r.outcome = "ok";
        r.sha256 = sha(res.data);
        r.size = res.data.length;
        r.text = res.data.length < 200 ? text(res.data) : "";
      } catch (e) {
        r.code = e.code ?? "INTERNAL";
        r.outcome = e.outcome ?? "unknown";
        r.message = e.message;
      }
      out.push(r);
    }
    return { results: out };
  },

  // serve: responders that follow the spec, for a Go shim Client.
  async serve(nc) {
    const stores = new cc.Stores(nc);
    rpc.serve(nc, "jsrpc.echo", (data, req) => data, { stores });
    rpc.serve(nc, "jsrpc.size", (data) => pattern(Number(text(data))), { stores });
    rpc.serve(nc, "jsrpc.sha", (data) => utf8(sha(data)), { stores });
    rpc.serve(nc, "jsrpc.sha-nocc", (data) => utf8(sha(data)));
    // Two responders answer every request (plain subscriptions): only one
    // claim-checked reply may be stored under the reply-key's name.
    for (let i = 0; i < 2; i++) rpc.serve(nc, "jsrpc.twice", (data) => pattern(Number(text(data))), { stores });
    rpc.serve(nc, "jsrpc.invalid", () => { throw rpc.reject("INVALID_ARGUMENT", "no"); });
    rpc.serve(nc, "jsrpc.fail", () => { throw new Error("boom"); });
    rpc.serve(nc, "jsrpc.timeout", (data, req) => utf8(rpc.HeaderTimeout + "=" + hget(req.headers, rpc.HeaderTimeout) + " " + rpc.HeaderOperationID + "=" + hget(req.headers, rpc.HeaderOperationID)));
    // Scatter-gather (7): a reply saying which limit header the request
    // carried, an error reply, and later the empty reply that ends it.
    rpc.serve(nc, "jsrpc.many", (data, req) => utf8(`accept=${hhas(req.headers, rpc.HeaderAccept)} max-payload=${hget(req.headers, rpc.HeaderMaxPayload)}`));
    rpc.serve(nc, "jsrpc.many", () => { throw rpc.reject("INVALID_ARGUMENT", "not me"); });
    rpc.serve(nc, "jsrpc.many", () => new Promise((r) => setTimeout(() => r(new Uint8Array(0)), 300)));
    const done = nc.subscribe("interop.done", { max: 1 });
    await nc.flush();
    console.log("READY");
    for await (const _ of done) break;
    return {};
  },

  ...stream.scenarios(pattern, sha),
};

const name = process.argv[2];
const nc = await connect({ servers: process.env.NATS_URL, maxReconnectAttempts: 0 });
try {
  const result = await scenarios[name](nc);
  console.log("RESULT " + JSON.stringify(result));
} finally {
  await nc.drain();
}
