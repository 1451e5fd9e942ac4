// How the console writes a figure or a time for people, and reads the JSON they type: the
// one place for shared formatting, so a size reads the same on the Overview, the Files page
// and an upload's progress, a time the same on every list, and a box that is not JSON is
// named the same way on every form.

/** A count of bytes in binary units, one decimal past bytes: 1536 → "1.5 KiB". */
export function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

/** A time as the server gave it, shorter: "2026-11-27 20:01:02 UTC". No time is "never":
 * where one may be missing it is a device not yet seen or a claim that does not expire. */
export function when(iso) {
  if (!iso) return "never";
  return iso.replace("T", " ").replace(/\.\d+/, "").replace(/Z$/, " UTC");
}

/** The JSON a person typed into the box called `label`, or an Error saying it is not JSON. */
export function parseJson(text, label) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${label} is not JSON: ${error.message}`);
  }
}

/** As `parseJson`, for a box that may be left empty: undefined then (nothing is sent). */
export function optionalJson(text, label) {
  return text && text.trim() ? parseJson(text, label) : undefined;
}
