/** What a link serves, read whole: its status, its headers, its bytes and their first five. */
export interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** The first five bytes as text: `%PDF-` for a PDF. */
  magic: string;
}

/** Fetches a link as an ERP or a browser would (no bearer token, unless `init` adds headers). */
export async function download(url: string, init?: RequestInit): Promise<Download> {
  const res = await fetch(url, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, magic: bytes.subarray(0, 5).toString('latin1') };
}
