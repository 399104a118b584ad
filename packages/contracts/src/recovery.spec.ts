import { ShardEpochs } from './recovery';

const reading = (entries: Record<string, string>): Map<string, string> => new Map(Object.entries(entries));

describe('ShardEpochs', () => {
  it('finds no loss in a first reading, nor in a key seen for the first time (a new slot range)', async () => {
    const epochs = new ShardEpochs();
    const losses: (readonly string[])[] = [];
    const onLoss = async (lost: readonly string[]): Promise<number> => {
      losses.push(lost);
      return lost.length;
    };
    expect(await epochs.observe(reading({ a: '1:x', b: '1:y' }), onLoss)).toBeUndefined();
    expect(await epochs.observe(reading({ a: '1:x', b: '1:y', c: '2:z' }), onLoss)).toBeUndefined();
    expect(losses).toEqual([]);
  });

  it('runs onLoss for the keys whose value changed, and not again for the same reading', async () => {
    const epochs = new ShardEpochs();
    const losses: (readonly string[])[] = [];
    const onLoss = async (lost: readonly string[]): Promise<number> => {
      losses.push(lost);
      return 7;
    };
    await epochs.observe(reading({ a: '1:x', b: '1:y' }), onLoss);
    expect(await epochs.observe(reading({ a: '1:x', b: '3:w' }), onLoss)).toBe(7);
    expect(await epochs.observe(reading({ a: '1:x', b: '3:w' }), onLoss)).toBeUndefined();
    expect(losses).toEqual([['b']]);
  });

  it('keeps a loss whose onLoss failed: the next reading runs it again, then no more', async () => {
    const epochs = new ShardEpochs();
    let calls = 0;
    const onLoss = async (lost: readonly string[]): Promise<readonly string[]> => {
      calls += 1;
      if (calls === 1) throw new Error('the re-send was refused');
      return lost;
    };
    await epochs.observe(reading({ a: '1:x', b: '1:y' }), onLoss);
    await expect(epochs.observe(reading({ a: '2:v', b: '1:y' }), onLoss)).rejects.toThrow('the re-send was refused');
    expect(await epochs.observe(reading({ a: '2:v', b: '1:y' }), onLoss)).toEqual(['a']);
    expect(await epochs.observe(reading({ a: '2:v', b: '1:y' }), onLoss)).toBeUndefined();
    expect(calls).toBe(2);
  });
});
