// How the console writes a figure for people: the one place for shared formatting, so a
// size reads the same on the Overview, the Files page and an upload's progress.

/** A count of bytes in binary units, one decimal past bytes: 1536 → "1.5 KiB". */
export function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}
