// Shared by the tests: run a records case and a batch case through the SDK.
export function encodeCase(rldp, c) {
  try {
    const alpha = rldp.Alphabet.fromDict(toValue(c.alphabet));
    const records = c.typed ? typed(c.records) : c.records;
    let indices;
    if (c.shape === "one") indices = [alpha.encodeOne(records)];
    else if (c.shape === "columns") indices = Array.from(alpha.encodeColumns(records));
    else indices = Array.from(alpha.encode(records));
    return { error: null, indices };
  } catch (exc) {
    if (!(exc instanceof rldp.RldpError)) throw exc;
    return { error: exc.name, indices: null };
  }
}

// A "typed" case's value (conformance/python_client.py `typed`): {"int": digits} is a number when it is a
// safe integer, else a bigint; {"float": repr} a number ("nan", "inf", "-inf", "-0.0" included).
function typed(v) {
  if (Array.isArray(v)) return v.map(typed);
  if (v === null || typeof v !== "object") return v;
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === "int") {
    const b = BigInt(v.int);
    return Number.isSafeInteger(Number(b)) && BigInt(Number(b)) === b ? Number(b) : b;
  }
  if (keys.length === 1 && keys[0] === "float") {
    return { nan: NaN, inf: Infinity, "-inf": -Infinity }[v.float] ?? Number(v.float);
  }
  return Object.fromEntries(keys.map((k) => [k, typed(v[k])]));
}

function toValue(v) {
  return JSON.parse(JSON.stringify(v));
}

export function batchCase(rldp, c) {
  if ("body_base64" in c) {
    try {
      rldp.checkBatchBody(new Uint8Array(Buffer.from(c.body_base64, "base64")), c.outputs, c.window ? rldp.Window.parse(c.window) : null, c.now);
      return { error: null };
    } catch (exc) {
      if (!(exc instanceof rldp.RldpError)) throw exc;
      return { error: exc.name };
    }
  }
  const ids = [...c.batch_ids];
  const batches = rldp.makeBatches(c.mechanism, Int32Array.from(c.reports), c.batch_size, c.window, () => ids.shift());
  const bodies = batches.map((b) => {
    const parsed = rldp.checkBatchBody(b.body, c.outputs, c.window ? rldp.Window.parse("P1D") : null, c.now);
    const stored = rldp.storedForm(parsed.reports, c.outputs);
    return {
      batch: parsed.batch,
      body_base64: Buffer.from(b.body).toString("base64"),
      window: parsed.window,
      sha256: stored.sha256,
      stored_encoding: stored.encoding,
      payload_base64: Buffer.from(stored.payload).toString("base64"),
    };
  });
  return { error: null, bodies };
}
