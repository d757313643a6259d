// Files the service serves gzip-compressed without `Content-Encoding` (export hours, replay
// files), inflated with the browser's own DecompressionStream.

const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b;

/** The text of `bytes`, inflated first when they are gzip (a proxy may have inflated them already). */
export function gunzipText(bytes: Uint8Array): Promise<string> {
  const blob = new Blob([bytes as BlobPart]);
  return isGzip(bytes) ? new Response(blob.stream().pipeThrough(new DecompressionStream('gzip'))).text() : blob.text();
}
