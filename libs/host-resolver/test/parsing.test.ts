import { DnsServersError, parseDnsServers, parseHostsFile } from '../src';

it('parses a hosts file: comments, aliases, both families, names in lower case', () => {
  const table = parseHostsFile(
    [
      '# comment',
      '127.0.0.1 localhost',
      '::1 localhost ip6-localhost # trailing',
      '  10.0.0.5\tERP.Example.Test.  erp-alias',
      '10.0.0.5 erp.example.test',
      'garbage line here',
      '',
    ].join('\n'),
  );
  expect(table.get('localhost')).toEqual([
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ]);
  expect(table.get('erp.example.test')).toEqual([{ address: '10.0.0.5', family: 4 }]);
  expect(table.get('erp-alias')).toEqual([{ address: '10.0.0.5', family: 4 }]);
  expect(table.has('line')).toBe(false);
  expect(table.size).toBe(4);
});

it('parses a nameserver list in the forms the resolver takes', () => {
  expect(parseDnsServers('127.0.0.1:5353, 10.0.0.2 ,2001:db8::1,[2001:db8::2]:53,')).toEqual([
    '127.0.0.1:5353',
    '10.0.0.2',
    '2001:db8::1',
    '[2001:db8::2]:53',
  ]);
  expect(parseDnsServers('')).toEqual([]);
  for (const bad of ['dns.example.com', '127.0.0.1:0', '127.0.0.1:70000', '[10.0.0.1]:53', '1.2.3']) {
    expect(() => parseDnsServers(bad)).toThrow(DnsServersError);
  }
});
