// The example page's script (bundled to app.js with esbuild): verify, memoise in IndexedDB, submit, show.
import { Client, IndexedDBStateStore } from "../src/index.js";

const params = new URLSearchParams(location.search);
const server = params.get("server") ?? "http://127.0.0.1:8000";
const mechanismId = params.get("mechanism") ?? "";
const record = { sex: params.get("sex") ?? "Female", colour: params.get("colour") ?? "green" };
const show = (id: string, text: string) => ((document.getElementById(id) as HTMLElement).textContent = text);

async function main(): Promise<void> {
  const client = new Client(server, { store: new IndexedDBStateStore("rldp-example") });
  const mech = await client.mechanism(mechanismId);
  show("mechanism", mech.id);
  show("privacy", `${mech.notion}, ε = ${mech.epsilon} (audited ${mech.epsilonAudited.toFixed(6)})`);
  show("record", JSON.stringify(record));
  const [y] = await client.privatize(mech.id, [record], { owners: "this-browser" }); // the memoised draw
  const receipt = await client.submit(mech.id, [record], { owners: "this-browser" }); // sends that draw
  show("sent", String(y));
  show("receipt", `accepted ${receipt.accepted}, batch ${receipt.batchIds.join(", ")}`);
  show("status", "sent");
}

main().catch((exc: Error) => {
  const el = document.getElementById("status") as HTMLElement;
  el.textContent = `${exc.name}: ${exc.message}`;
  el.className = "error";
});
