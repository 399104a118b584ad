import { encodeCommand, encodeParts, RespDecoder, RespReplyError } from './resp-connection';
import type { RespReply } from './resp-connection';

function decodeAll(chunks: readonly Buffer[]): RespReply[] {
  const replies: RespReply[] = [];
  const decoder = new RespDecoder((reply) => replies.push(reply));
  for (const chunk of chunks) decoder.write(chunk);
  return replies;
}

/** Every reply type the gateway's commands get, back to back. */
const STREAM = Buffer.from([
  '+OK\r\n',
  '-NOSCRIPT No matching script. Please use EVAL.\r\n',
  ':42\r\n',
  ':-3\r\n',
  '$5\r\nhello\r\n',
  '$-1\r\n',
  '*-1\r\n',
  '*0\r\n',
  // A bulk string holding CR LF, and one with multi-byte UTF-8 (length in bytes).
  '$4\r\na\r\nb\r\n',
  `$${Buffer.byteLength('café ✓')}\r\ncafé ✓\r\n`,
  // A money script's reply: one element per member, nested.
  '*3\r\n*2\r\n$2\r\nok\r\n:7\r\n*2\r\n$3\r\nerr\r\n$11\r\nbad member!\r\n*1\r\n$4\r\ncold\r\n',
].join(''));

const EXPECTED: RespReply[] = [
  'OK',
  new RespReplyError('NOSCRIPT No matching script. Please use EVAL.'),
  42,
  -3,
  'hello',
  null,
  null,
  [],
  'a\r\nb',
  'café ✓',
  [['ok', 7], ['err', 'bad member!'], ['cold']],
];

describe('RespDecoder', () => {
  it('decodes every reply type in order', () => {
    const replies = decodeAll([STREAM]);
    expect(replies).toEqual(EXPECTED);
    expect(replies[1]).toBeInstanceOf(RespReplyError);
    expect((replies[1] as Error).message).toBe('NOSCRIPT No matching script. Please use EVAL.');
  });

  it('gives the same replies whatever the chunks are cut at', () => {
    for (let cut = 1; cut < STREAM.length; cut++) {
      expect(decodeAll([STREAM.subarray(0, cut), STREAM.subarray(cut)])).toEqual(EXPECTED);
    }
  });

  it('gives the same replies fed one byte at a time', () => {
    const bytes = Array.from({ length: STREAM.length }, (_, i) => STREAM.subarray(i, i + 1));
    expect(decodeAll(bytes)).toEqual(EXPECTED);
  });

  it('holds back a reply until its last byte', () => {
    const replies: RespReply[] = [];
    const decoder = new RespDecoder((reply) => replies.push(reply));
    decoder.write(Buffer.from('*2\r\n$5\r\nhel'));
    expect(replies).toEqual([]);
    decoder.write(Buffer.from('lo\r\n:1'));
    expect(replies).toEqual([]);
    decoder.write(Buffer.from('\r\n'));
    expect(replies).toEqual([['hello', 1]]);
  });

  it('refuses bytes that are not RESP2, and starts clean after a reset', () => {
    const replies: RespReply[] = [];
    const decoder = new RespDecoder((reply) => replies.push(reply));
    expect(() => decoder.write(Buffer.from('?what\r\n'))).toThrow(/not RESP2/);
    // The connection is dropped after such a throw; its decoder is reset for the next one.
    decoder.reset();
    expect(() => decoder.write(Buffer.from(':4x\r\n'))).toThrow(/malformed integer/);
    decoder.reset();
    decoder.write(Buffer.from(':5\r\n'));
    expect(replies).toEqual([5]);
  });
});

describe('encodeCommand', () => {
  it('encodes the name and every argument as bulk strings, lengths in bytes', () => {
    expect(encodeCommand('evalsha', ['abc', 2, 'k', 'café'])).toBe('*5\r\n$7\r\nevalsha\r\n$3\r\nabc\r\n$1\r\n2\r\n$1\r\nk\r\n$5\r\ncafé\r\n');
    expect(encodeCommand('ping', [])).toBe('*1\r\n$4\r\nping\r\n');
    expect(encodeCommand('set', ['k', ''])).toBe('*3\r\n$3\r\nset\r\n$1\r\nk\r\n$0\r\n\r\n');
  });

  it('puts the head arguments first (a script\'s SHA and key count) and counts them', () => {
    expect(encodeCommand('evalsha', ['k', 'a'], ['abc', 1])).toBe(encodeCommand('evalsha', ['abc', 1, 'k', 'a']));
    expect(encodeCommand('evalsha', ['k', 'a'], ['abc', 1])).toMatch(/^\*5\r\n/);
  });

  it('encodes parts in order as one command, empty parts adding nothing (a merged script call)', () => {
    expect(encodeParts('evalsha', [['abc', 3], ['{a:1}:b'], [], ['{a:1}:r1', '{a:1}:r2'], ['x', 7]]))
      .toBe(encodeCommand('evalsha', ['abc', 3, '{a:1}:b', '{a:1}:r1', '{a:1}:r2', 'x', 7]));
    expect(encodeParts('ping', [])).toBe('*1\r\n$4\r\nping\r\n');
  });

  it('sends a measured text with the length it was given: the same bytes as the plain text, multi-byte UTF-8 included', () => {
    const value = '3|1700000000000|1|[{"t":"café \\r\\n ✓"}]';
    const measured = encodeParts('set', [['k', { text: value, byteLength: Buffer.byteLength(value) }, 'PX', 30_000]]);
    expect(measured).toBe(encodeCommand('set', ['k', value, 'PX', 30_000]));
    // The length is the caller's: a text measured in UTF-16 units would be framed wrong (what Redis would refuse).
    expect(encodeParts('set', [['k', { text: value, byteLength: value.length }]])).not.toBe(encodeCommand('set', ['k', value]));
  });

  it('round-trips through the decoder as an array of the same strings (the form Redis reads)', () => {
    const [decoded] = decodeAll([Buffer.from(encodeCommand('xadd', ['{a:1}:s', '*', 'r', '{"x":"é\\r\\n"}', -12]))]);
    expect(decoded).toEqual(['xadd', '{a:1}:s', '*', 'r', '{"x":"é\\r\\n"}', '-12']);
  });
});
