/** Node-only parts of the SDK: the state in a file, replaced atomically (write, fsync, rename). */
import { open, readFile, rename, unlink } from "node:fs/promises";
import { StateFileError } from "./errors.js";
import { checkState, type ClientState, type StateStore } from "./state.js";

export * from "./index.js";

/** The client state in a JSON file (mode 0600), written to a temporary file, fsynced and renamed. */
export class FileStateStore implements StateStore {
  constructor(readonly where: string) {}

  async load(): Promise<ClientState | null> {
    let text: string;
    try {
      text = await readFile(this.where, "utf8");
    } catch (exc) {
      if ((exc as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new StateFileError(this.where, `cannot be read: ${(exc as Error).message}`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new StateFileError(this.where, "is not valid JSON (corrupt); it is not replaced: a new state would re-randomise every record");
    }
    return checkState(value, this.where);
  }

  async save(state: ClientState): Promise<void> {
    const tmp = `${this.where}.tmp-${process.pid}`;
    try {
      const fh = await open(tmp, "w", 0o600);
      try {
        await fh.writeFile(JSON.stringify(state));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.where);
    } catch (exc) {
      await unlink(tmp).catch(() => undefined);
      throw new StateFileError(this.where, `cannot be written: ${(exc as Error).message}`);
    }
  }
}
