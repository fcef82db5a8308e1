import { createSocket, type Socket } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';

/** What the test nameserver knows: addresses per name (lower case), with one TTL in seconds. */
export interface Zone {
  [name: string]: { addresses: string[]; ttl: number };
}

export interface TestNameserver {
  /** `127.0.0.1:port`, as the resolver's servers take it. */
  server: string;
  /** Every query received, in order: name and type (`A`, `AAAA` or the number). */
  queries: Array<{ name: string; type: string }>;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

/**
 * A nameserver on a UDP socket of 127.0.0.1. With a zone it answers A and AAAA queries from it
 * (a name it does not know: NXDOMAIN; a known name without that family: no records); without one it
 * receives every query and answers none, as a nameserver that is down or cut off by a firewall.
 * The replies are built by hand from RFC 1035 (header, the question echoed, answers pointing at it),
 * independently of the resolver under test.
 */
export async function startNameserver(zone?: Zone): Promise<TestNameserver> {
  const socket = createSocket('udp4');
  const queries: TestNameserver['queries'] = [];
  socket.on('message', (query, peer) => {
    const question = readQuestion(query);
    if (!question) return;
    queries.push({ name: question.name, type: typeName(question.type) });
    if (zone) socket.send(reply(query, question, zone), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => closeSocket(socket),
  };
}

interface Question {
  name: string;
  type: number;
  /** Offset of the byte after the question (QTYPE and QCLASS included). */
  end: number;
}

function readQuestion(query: Buffer): Question | undefined {
  const labels: string[] = [];
  let at = 12;
  while (at < query.length && query[at] !== 0) {
    const length = query[at];
    labels.push(query.subarray(at + 1, at + 1 + length).toString('ascii'));
    at += 1 + length;
  }
  if (at + 5 > query.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(at + 1), end: at + 5 };
}

function reply(query: Buffer, question: Question, zone: Zone): Buffer {
  const entry = zone[question.name];
  const fits = question.type === TYPE_A ? isIPv4 : question.type === TYPE_AAAA ? isIPv6 : () => false;
  const addresses = entry?.addresses.filter((a) => fits(a)) ?? [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // the query's id
  // QR (a response), the query's RD, RA; RCODE 3 (NXDOMAIN) for an unknown name.
  header.writeUInt16BE(0x8080 | (query.readUInt16BE(2) & 0x0100) | (entry ? 0 : 3), 2);
  header.writeUInt16BE(1, 4); // QDCOUNT
  header.writeUInt16BE(addresses.length, 6); // ANCOUNT
  const answers = addresses.map((address) => answer(question.type, address, entry?.ttl ?? 0));
  return Buffer.concat([header, query.subarray(12, question.end), ...answers]);
}

function answer(type: number, address: string, ttl: number): Buffer {
  const data = type === TYPE_A ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
  const record = Buffer.alloc(12);
  record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
  record.writeUInt16BE(type, 2);
  record.writeUInt16BE(1, 4); // class IN
  record.writeUInt32BE(ttl, 6);
  record.writeUInt16BE(data.length, 10);
  return Buffer.concat([record, data]);
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = address.includes('::') ? groups(tail) : [];
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const bytes = Buffer.alloc(16);
  all.forEach((group, i) => bytes.writeUInt16BE(parseInt(group, 16), i * 2));
  return bytes;
}

function typeName(type: number): string {
  return type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : String(type);
}

function closeSocket(socket: Socket): Promise<void> {
  return new Promise((resolve) => socket.close(() => resolve()));
}
