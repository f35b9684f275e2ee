import { readAtMost } from './sso-saml.client';

/** A chunked body (no Content-Length) of `chunks` pieces of `size` bytes, counting what was pulled. */
function chunked(chunks: number, size: number) {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === chunks) return controller.close();
      pulled++;
      controller.enqueue(new Uint8Array(size).fill(0x61));
    },
  });
  return { res: new Response(body), pulled: () => pulled };
}

describe('readAtMost (SAML metadata fetch, review finding)', () => {
  it('reads a body within the limit, and stops reading one past it whatever its headers say', async () => {
    expect(await readAtMost(chunked(3, 10).res, 30)).toBe('a'.repeat(30));
    const endless = chunked(1_000_000, 1024);
    expect(await readAtMost(endless.res, 200_000)).toBeUndefined();
    expect(endless.pulled()).toBeLessThan(300);
  });
});
