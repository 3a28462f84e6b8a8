/**
 * Makes a node URL safe to print. `masked` already has env-derived parts replaced by `***`;
 * on top of that every query value and any userinfo password is hidden, because providers
 * put API keys there even when an operator pasted them literally.
 */
export function redactUrl(masked: string): string {
  let url: URL;
  try {
    url = new URL(masked);
  } catch {
    const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(masked)?.[0] ?? '';
    return `${scheme}***`;
  }
  const query = [...url.searchParams.keys()].map((key) => `${key}=***`).join('&');
  const path = url.pathname.replaceAll('%2A%2A%2A', '***');
  const auth = url.username || url.password ? '***@' : '';
  return `${url.protocol}//${auth}${url.host}${path}${query ? `?${query}` : ''}`;
}
