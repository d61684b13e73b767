/**
 * One line of comma-separated fields, as Go's encoding/csv reads the flags Bacalhau splits (`-V`, `-i`): a field may
 * be double-quoted to hold commas, its quotes doubled; anything after a closing quote is kept.
 */
export function csvFields(text: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = "";
    if (text[i] === '"') {
      i++;
      for (; i < text.length; i++) {
        if (text[i] === '"' && text[i + 1] === '"') {
          field += '"';
          i++;
        } else if (text[i] === '"') {
          i++;
          break;
        } else field += text[i];
      }
      const comma = text.indexOf(",", i);
      field += text.slice(i, comma === -1 ? text.length : comma);
      i = comma === -1 ? text.length : comma;
    } else {
      const comma = text.indexOf(",", i);
      field = text.slice(i, comma === -1 ? text.length : comma);
      i = comma === -1 ? text.length : comma;
    }
    fields.push(field);
    if (i >= text.length) return fields;
    i++;
  }
}
