// Shared by the tests: run a records case and a batch case through the SDK.
export function encodeCase(rldp, c) {
  try {
    const alpha = rldp.Alphabet.fromDict(toValue(c.alphabet));
    let indices;
    if (c.shape === "one") indices = [alpha.encodeOne(c.records)];
    else if (c.shape === "columns") indices = Array.from(alpha.encodeColumns(c.records));
    else indices = Array.from(alpha.encode(c.records));
    return { error: null, indices };
  } catch (exc) {
    if (!(exc instanceof rldp.RldpError)) throw exc;
    return { error: exc.name, indices: null };
  }
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
