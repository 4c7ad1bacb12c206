// Which inputs to read: the command line's files, directories (walked recursively in name order) and standard
// input, as a list of sources. In a directory only regular files are read: FIFOs, sockets and devices are skipped
// with a warning (opening a FIFO would wait forever for a writer), and symbolic links to directories are not
// followed unless --follow-symlinks, which then reads each directory once (by device and inode), so a link to a
// parent cannot loop. Named on the command line, a FIFO or a character device is read as a stream (like stdin). A
// file is read once however many paths lead to it (by device and inode, as fclones and jdupes count files).
import fs from 'node:fs';
import path from 'node:path';
import { type Reporter, errorCode } from './report.js';

export interface Source {
  /** As given or found: a path, or "-" for standard input. */
  name: string;
  /** Regular files can be read again at any offset; streams (stdin, FIFOs, devices) cannot. */
  seekable: boolean;
  /** Size in bytes when known (regular files). */
  size: number | undefined;
}

export interface ListOptions {
  followSymlinks: boolean;
  /**
   * dedup --state: whether a file is a document the state already holds (then it is not read: one run over both
   * would have read it once).
   */
  recorded?: (name: string, stat: fs.Stats) => boolean;
}

function kindOf(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

export function listSources(inputs: readonly string[], o: ListOptions, report: Reporter): Source[] {
  const out: Source[] = [];
  const visited = new Set<string>(); // directories read, as "device:inode"
  // Files read, as "device:inode": a file reached by two paths (a symbolic or hard link, a repeated argument) is one
  // document, read once, under the first path met.
  const files = new Map<string, string>();
  const addFile = (name: string, stat: fs.Stats): void => {
    const key = `${stat.dev}:${stat.ino}`;
    const first = files.get(key);
    if (first !== undefined) {
      report.note(`${name}: the same file as ${first}, read once`, 'files reached by a second path');
      return;
    }
    files.set(key, name);
    if (o.recorded?.(name, stat)) {
      report.count('files already in the state, skipped');
      return;
    }
    out.push({ name, seekable: true, size: stat.size });
  };
  const walk = (dir: string, stat: fs.Stats): void => {
    const key = `${stat.dev}:${stat.ino}`;
    if (visited.has(key)) {
      report.warn(
        `${dir}: directory already read (a symbolic link loops back to it, or links to it twice)`,
        'directories met twice',
      );
      return;
    }
    visited.add(key);
    let entries: string[];
    try {
      entries = fs.readdirSync(dir).sort();
    } catch (error) {
      report.bad(`${dir}: cannot read directory (${errorCode(error)})`, 'unreadable');
      return;
    }
    for (const name of entries) {
      const full = path.join(dir, name);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(full);
        if (st.isSymbolicLink()) {
          const target = fs.statSync(full);
          if (target.isDirectory() && !o.followSymlinks) {
            report.warn(
              `${full}: symbolic link to a directory, not followed (use --follow-symlinks)`,
              'links to directories not followed',
            );
            continue;
          }
          st = target;
        }
      } catch (error) {
        report.bad(`${full}: cannot read (${errorCode(error)})`, 'unreadable');
        continue;
      }
      if (st.isDirectory()) walk(full, st);
      else if (st.isFile()) addFile(full, st);
      else report.warn(`${full}: ${kindOf(st)}, not read`, 'FIFOs, sockets and devices');
    }
  };
  for (const input of inputs) {
    if (input === '-') {
      out.push({ name: '-', seekable: false, size: undefined });
      continue;
    }
    let stat: fs.Stats;
    try {
      stat = fs.statSync(input);
    } catch (error) {
      report.bad(`${input}: cannot read (${errorCode(error)})`, 'unreadable');
      continue;
    }
    if (stat.isDirectory()) walk(input, stat);
    else if (stat.isFile()) addFile(input, stat);
    else if (stat.isFIFO() || stat.isCharacterDevice()) out.push({ name: input, seekable: false, size: undefined });
    else report.warn(`${input}: ${kindOf(stat)}, not read`, 'FIFOs, sockets and devices');
  }
  return out;
}
