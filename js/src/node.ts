/**
 * Node-only parts of the SDK: the state in a file — a snapshot replaced atomically (write, fsync,
 * rename) and an append-only journal of changes, fsynced once per save.
 */
import { open, readFile, rename, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { StateFileError } from "./errors.js";
import { applyChange, checkState, OLDER_STATE_FORMATS, STATE_FORMAT, upgradeState, type Change, type ClientState, type StateStore } from "./state.js";

export * from "./index.js";

/** The journal is folded into a new snapshot once it is larger than this and than the snapshot. */
const COMPACT_BYTES = 1 << 20;

/**
 * The client state in a JSON file `where` (mode 0600), with a journal beside it (`where + ".journal"`).
 *
 * A save that is given the client's changes appends them as one line to the journal and fsyncs it:
 * its cost is that of the changes, not of the whole state (100,000 new owners: one line, one fsync).
 * Once the journal outgrows the snapshot (and 1 MiB), the state is written whole to a temporary file,
 * fsynced and renamed over the snapshot, with a generation number one higher; a fresh journal of that
 * generation then replaces the old one the same way. Loading reads the snapshot and replays the journal
 * when its generation matches (a journal of an older generation is already in the snapshot: a crash
 * between the two renames). A last line cut short by a crash was never acknowledged (its save had not
 * returned, so nothing it holds was sent) and is dropped; any other damage is a StateFileError, and
 * the files are never replaced by a fresh state (that would re-randomise every record).
 */
export class FileStateStore implements StateStore {
  readonly journal: string;
  private generation = 0;
  private snapshotBytes = 0;
  private journalBytes = 0;
  private loadedState = false;
  /** The journal on disk ends with a complete line of this generation: the next save may append to it. */
  private appendable = false;

  constructor(readonly where: string) {
    this.journal = `${where}.journal`;
  }

  async load(): Promise<ClientState | null> {
    const text = await this.read(this.where);
    if (text === null) {
      this.loadedState = true;
      this.appendable = false;
      return null;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new StateFileError(this.where, "is not valid JSON (corrupt); it is not replaced: a new state would re-randomise every record");
    }
    const state = checkState(value, this.where);
    const generation = (value as { generation?: unknown }).generation ?? 0;
    if (!Number.isSafeInteger(generation)) throw new StateFileError(this.where, "is corrupt: its generation is not an integer");
    this.generation = generation as number;
    this.snapshotBytes = Buffer.byteLength(text);
    delete (state as { generation?: unknown }).generation;
    const journal = (await this.read(this.journal)) ?? "";
    this.journalBytes = this.replay(state, journal);
    // An older format is replayed as written, then upgraded: its next save is a whole snapshot in this format.
    this.appendable = !upgradeState(state) && this.journalBytes > 0 && this.journalBytes === Buffer.byteLength(journal);
    this.loadedState = true;
    return state;
  }

  /** Apply the journal's changes of this generation to `state`; the bytes of the journal that count
   * (0: none of this generation; fewer than the file's: its last line was cut short). */
  private replay(state: ClientState, text: string): number {
    if (!text) return 0;
    const lines = text.split("\n");
    const torn = lines.pop()!; // "" after a complete last line; else a line whose save never returned
    let header: unknown;
    try {
      header = JSON.parse(lines[0] ?? torn);
    } catch {
      header = undefined;
    }
    if (lines.length === 0) return 0; // not even the header was written whole: a compaction cut short
    const format = typeof header === "object" && header !== null ? (header as { format?: unknown }).format : undefined;
    if (![STATE_FORMAT, ...OLDER_STATE_FORMATS].some((f) => format === `${f}/journal`)) {
      throw new StateFileError(this.journal, "is not the journal of an rldp client state (corrupt)");
    }
    // An older generation's is already in the snapshot (even of an older format: a crash right after an upgrade).
    if ((header as { generation?: unknown }).generation !== this.generation) return 0;
    if (format !== `${state.format}/journal`) throw new StateFileError(this.journal, `is corrupt: its format is ${String(format)}, its snapshot's ${state.format}`);
    for (let i = 1; i < lines.length; i++) {
      let changes: unknown;
      try {
        changes = JSON.parse(lines[i]);
      } catch {
        throw new StateFileError(this.journal, `is corrupt at line ${i + 1} (not JSON); it is not replaced: a new state would re-randomise every record`);
      }
      if (!Array.isArray(changes)) throw new StateFileError(this.journal, `is corrupt at line ${i + 1} (not a list of changes)`);
      try {
        for (const change of changes as Change[]) applyChange(state, change);
      } catch (exc) {
        throw new StateFileError(this.journal, `is corrupt at line ${i + 1} (${(exc as Error).message})`);
      }
    }
    return Buffer.byteLength(text) - Buffer.byteLength(torn);
  }

  private async read(path: string): Promise<string | null> {
    try {
      return await readFile(path, "utf8");
    } catch (exc) {
      if ((exc as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new StateFileError(path, `cannot be read: ${(exc as Error).message}`);
    }
  }

  async save(state: ClientState, changes?: readonly Change[]): Promise<void> {
    try {
      if (!this.loadedState) await this.load(); // learn the generation of what is on disk
      const whole = changes === undefined || !this.appendable;
      if (!whole && changes.length === 0) return;
      if (whole || this.journalBytes > Math.max(COMPACT_BYTES, this.snapshotBytes)) {
        await this.compact(state);
        return;
      }
      const line = `${JSON.stringify(changes)}\n`;
      this.appendable = false; // until this line is known to be whole
      const fh = await open(this.journal, "a", 0o600);
      try {
        await fh.appendFile(line);
        await fh.sync();
      } finally {
        await fh.close();
      }
      this.appendable = true;
      this.journalBytes += Buffer.byteLength(line);
    } catch (exc) {
      if (exc instanceof StateFileError) throw exc;
      throw new StateFileError(this.where, `cannot be written: ${(exc as Error).message}`);
    }
  }

  /** Write the whole state as the next generation's snapshot, then start that generation's journal. */
  private async compact(state: ClientState): Promise<void> {
    const generation = this.generation + 1;
    const text = JSON.stringify({ ...state, generation });
    await this.replace(this.where, text);
    this.generation = generation;
    this.snapshotBytes = Buffer.byteLength(text);
    const header = `${JSON.stringify({ format: `${state.format}/journal`, generation })}\n`;
    await this.replace(this.journal, header);
    this.journalBytes = Buffer.byteLength(header);
    this.appendable = true;
  }

  private async replace(path: string, text: string): Promise<void> {
    const tmp = `${path}.tmp-${process.pid}`;
    try {
      const fh = await open(tmp, "w", 0o600);
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, path);
      await syncDir(dirname(path));
    } catch (exc) {
      await unlink(tmp).catch(() => undefined);
      throw exc;
    }
  }
}

async function syncDir(path: string): Promise<void> {
  try {
    const fh = await open(path, "r");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // not every platform can open a directory
  }
}
