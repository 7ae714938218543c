// peer.mjs's stream scenarios (docs/protocol.md, 6), on lib/stream.js.
import { createHash } from "node:crypto";
import * as rpc from "./lib/rpc.js";
import { A, D, frame, requestStream, serveStream } from "./lib/stream.js";

// scenarios are the stream scenarios, on peer.mjs's pattern and sha.
export function scenarios(pattern, sha) {
  const collect = async (rs) => {
    const h = createHash("sha256");
    let n = 0;
    for await (const d of rs) { h.update(d); n += d.length; }
    return { sha256: h.digest("hex"), size: n };
  };
  return {
    // stream-read: read Go's stream, losing two data frames the first
    // time they arrive (the responder must send them again).
    async "stream-read"(nc) {
      console.log("READY");
      const lost = new Set();
      const drop = (kind, off) => {
        const k = Math.floor(off / 65536);
        if ((k === 3 || k === 500) && !lost.has(k)) { lost.add(k); return true; }
        return false;
      };
      const rs = await requestStream(nc, "stream.go", new TextEncoder().encode(String(64 << 20)), { window: 8 << 20, idle: 10000, drop });
      const r = await collect(rs);
      return { ...r, resends: rs.resends, lost: lost.size, digestByte: rs.digestByte ?? null };
    },
    // stream-forged: a Go responder that sends beyond the credit.
    async "stream-forged"(nc) {
      console.log("READY");
      try {
        const rs = await requestStream(nc, "stream.go.forged", new Uint8Array(0), { window: 1 << 20, idle: 5000 });
        await collect(rs);
        return { error: "" };
      } catch (e) {
        return { error: e.code, message: e.message };
      }
    },
    // stream-forge-ctl: a caller that grants beyond its window.
    async "stream-forge-ctl"(nc) {
      console.log("READY");
      const rs = await requestStream(nc, "stream.go", new TextEncoder().encode(String(8 << 20)), { window: 1 << 20, idle: 5000 });
      const b = new Uint8Array(18);
      b[0] = A; new DataView(b.buffer).setBigUint64(9, BigInt((1 << 20) + 1));
      rs.control(b);
      await nc.flush();
      rs.stop(); // nothing more to say: the responder must break
      return {};
    },
    // stream-serve: responders for Go callers.
    async "stream-serve"(nc) {
      const results = (name) => (r) => nc.isClosed() || nc.publish("interop.results", new TextEncoder().encode(JSON.stringify({ name, ...r })));
      let lost = 0, nData = 0;
      const drop = (kind) => kind === D && (++nData === 5 || nData === 700) && ++lost > 0;
      const size = (data) => Number(new TextDecoder().decode(data));
      serveStream(nc, "stream.js", async (data, req, out) => {
        const n = size(data), body = pattern(n);
        out.headers.set("Interop-Size", String(n));
        for (let off = 0; off < n; off += 1 << 20) await out.write(body.subarray(off, Math.min(n, off + (1 << 20))));
      }, { drop, report: results("stream.js") });
      serveStream(nc, "stream.js.fail", async (data, req, out) => {
        await out.write(pattern(1 << 20));
        throw new Error("failed mid-stream");
      }, { report: results("stream.js.fail") });
      serveStream(nc, "stream.js.early", async () => { throw rpc.reject("INVALID_ARGUMENT", "bad range"); }, { report: results("stream.js.early") });
      serveStream(nc, "stream.js.forged", async (data, req, out) => {
        out.start();
        // a data frame beyond the credit the caller granted
        out.publish({ off: out.granted, body: frame(D, out.granted, pattern(10)) });
        await new Promise((r) => setTimeout(r, 200));
      }, { report: results("stream.js.forged") });
      serveStream(nc, "stream.js.slow", async (data, req, out) => {
        for (let i = 0; i < 400 && !out.broken && !out.gone; i++) {
          await out.write(pattern(1000));
          await new Promise((r) => setTimeout(r, 20));
        }
        out.check();
      }, { report: results("stream.js.slow") });
      const done = nc.subscribe("interop.done", { max: 1 });
      await nc.flush();
      console.log("READY");
      for await (const _ of done) break;
      return { lost };
    },
  };
}
