import { dialectOf, PIX_DIALECTS, PIX_PATHS, PIX_SCOPES, receivedQuery } from '../src';

const { standard, inter } = PIX_DIALECTS;

describe('dialects', () => {
  it('ask for the same five scopes', () => {
    expect(PIX_SCOPES).toBe('cobv.write cobv.read pix.read webhook.read webhook.write');
    expect(standard.scopes).toBe(PIX_SCOPES);
    expect(inter.scopes).toBe(PIX_SCOPES);
  });

  it("place Inter's PIX API under /pix/v2 and its token under /oauth/v2/token of the account's base URL", () => {
    expect(inter.apiRoot('https://cdpj.partners.bancointer.com.br/')).toBe(
      'https://cdpj.partners.bancointer.com.br/pix/v2',
    );
    expect(inter.apiRoot('https://127.0.0.1:3101/inter')).toBe('https://127.0.0.1:3101/inter/pix/v2');
    expect(inter.tokenUrl('https://127.0.0.1:3101/inter')).toBe('https://127.0.0.1:3101/inter/oauth/v2/token');
  });

  it('take the standard API root as given and its token URL from the credentials', () => {
    expect(standard.apiRoot('https://127.0.0.1:3101/pix/v2/')).toBe('https://127.0.0.1:3101/pix/v2');
    expect(standard.tokenUrl('https://127.0.0.1:3101/pix/v2', 'https://127.0.0.1:3101/pix/oauth/token')).toBe(
      'https://127.0.0.1:3101/pix/oauth/token',
    );
    expect(() => standard.tokenUrl('https://127.0.0.1:3101/pix/v2')).toThrow(TypeError);
  });

  it('send x-conta-corrente to Inter only when the account names one, digits without leading zeros', () => {
    expect(inter.headers('0012345-6')).toEqual({ 'x-conta-corrente': '123456' });
    expect(inter.headers(null)).toEqual({});
    expect(standard.headers('123456')).toEqual({});
  });

  it("write a phone key without '+' in Inter's webhook path, and encode the path", () => {
    expect(PIX_PATHS.webhook(inter.webhookKey('+5511999999999'))).toBe('/webhook/5511999999999');
    expect(PIX_PATHS.webhook(standard.webhookKey('+5511999999999'))).toBe('/webhook/%2B5511999999999');
    expect(PIX_PATHS.webhook('pix@example.com')).toBe('/webhook/pix%40example.com');
    expect(PIX_PATHS.refund('E12345678202009091221abcdef12345', 'rcv1')).toBe(
      '/pix/E12345678202009091221abcdef12345/devolucao/rcv1',
    );
  });

  it('name the txid filter of GET /pix as each bank does, and page from 0', () => {
    const range = {
      from: new Date('2026-11-01T00:00:00Z'),
      to: new Date('2026-11-02T00:00:00Z'),
      page: 2,
      txid: 'abc',
    };
    expect(receivedQuery(inter, range).toString()).toBe(
      'inicio=2026-11-01T00%3A00%3A00.000Z&fim=2026-11-02T00%3A00%3A00.000Z&txId=abc&paginacao.paginaAtual=2',
    );
    expect(receivedQuery(standard, { ...range, page: 0 }).get('txid')).toBe('abc');
    expect(receivedQuery(standard, { ...range, page: 0 }).has('paginacao.paginaAtual')).toBe(false);
  });

  it('list every Inter difference with its source, and none for the standard', () => {
    expect(standard.differences).toEqual([]);
    expect(inter.differences.length).toBeGreaterThan(10);
    for (const difference of inter.differences) expect(difference.source).toContain('developers.inter.co');
    expect(dialectOf('inter')).toBe(inter);
    expect(dialectOf('pix')).toBe(standard);
  });
});
