/** RFC 4180 text as rows of fields, as a spreadsheet or Python's csv module reads it (LF or CRLF line ends). */
export function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c !== '"') field += c;
      else if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n") {
      rows.push([...row, field]);
      row = [];
      field = "";
    } else if (c !== "\r" || text[i + 1] !== "\n") field += c;
  }
  if (field !== "" || row.length > 0) rows.push([...row, field]);
  return rows;
}
