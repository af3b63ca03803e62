/**
 * Where valid JSON `text` gives one key twice in one object (`policies[0].alertEmails`), or null.
 * JSON.parse keeps the last value without a word; in a file a person wrote, the first is then lost
 * (a second "accounts" list drops every account of the first).
 */
export function duplicateKey(text: string): string | null {
  // Each open object (with its keys so far) or array (with its element's index), and where in it.
  const open: Array<{ keys?: Set<string>; at: string | number }> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const top = open.at(-1);
    if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (expectKey && top?.keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return [...open.slice(0, -1).map((o) => o.at), key].reduce(pathStep, '');
        top.keys.add(key);
        top.at = key;
        expectKey = false;
      }
      i = end;
    } else if (ch === '{') {
      open.push({ keys: new Set(), at: '' });
      expectKey = true;
    } else if (ch === '[') open.push({ at: 0 });
    else if (ch === '}' || ch === ']') open.pop();
    else if (ch === ',' && top) {
      if (top.keys) expectKey = true;
      else top.at = (top.at as number) + 1;
    }
  }
  return null;
}

const pathStep = (path: string, step: string | number): string =>
  typeof step === 'number' ? `${path}[${step}]` : path ? `${path}.${step}` : step;

/** The refusal's words for a key given twice, after `what` names the file. */
export const twiceWords = (key: string): string =>
  `gives the key ${key} twice: JSON keeps only the last, and the first would be lost without a word; keep one`;

/**
 * Why text is not JSON, in words that quote none of it: JSON.parse's own message quotes the text
 * (`Unexpected token 's', "sk_live_ab"... is not valid JSON`), and a file named by mistake (a key
 * file for an accounts or state file) may hold a secret.
 */
export function notJsonReason(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (message.startsWith('Unexpected end of JSON input')) return 'it ends too soon, or is empty';
  const at = /at position (\d{1,12})/.exec(message)?.[1];
  return at === undefined
    ? 'it does not parse as JSON'
    : `it does not parse as JSON at character ${Number(at) + 1}`;
}
