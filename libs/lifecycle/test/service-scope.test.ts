import { CloseError, ServiceScope, startService } from '../src';

describe('startService', () => {
  it('stops what it opened, the last opened first', async () => {
    const order: string[] = [];
    const service = await startService(async (scope) => {
      await scope.open(
        'database',
        () => 'db',
        () => order.push('database'),
      );
      await scope.open(
        'bus',
        () => 'bus',
        () => order.push('bus'),
      );
      scope.defer('server', () => order.push('server'));
      return { port: 1234 };
    });
    expect(service.port).toBe(1234);
    expect(order).toEqual([]);
    await service.stop();
    expect(order).toEqual(['server', 'bus', 'database']);
    await service.stop();
    expect(order).toEqual(['server', 'bus', 'database']);
  });

  it('closes what opened before a failed start, and throws the start error', async () => {
    const order: string[] = [];
    const failure = new Error('port in use');
    await expect(
      startService(async (scope) => {
        await scope.open(
          'database',
          () => 'db',
          () => order.push('database'),
        );
        await scope.open(
          'bus',
          () => 'bus',
          () => order.push('bus'),
        );
        await scope.open(
          'server',
          () => Promise.reject(failure),
          () => order.push('server'),
        );
        return {};
      }),
    ).rejects.toBe(failure);
    expect(order).toEqual(['bus', 'database']);
  });

  it('runs every closer when one fails, and names what failed', async () => {
    const order: string[] = [];
    const scope = new ServiceScope();
    scope.defer('database', () => order.push('database'));
    scope.defer('bus', () => Promise.reject(new Error('connection reset')));
    scope.defer('server', () => order.push('server'));
    const closed = scope.close();
    await expect(closed).rejects.toBeInstanceOf(CloseError);
    await expect(closed).rejects.toThrow('closing bus failed: connection reset');
    expect(order).toEqual(['server', 'database']);
  });

  it('refuses to open while closing, and disposes with await using', async () => {
    const order: string[] = [];
    {
      await using scope = new ServiceScope();
      scope.defer('one', () => order.push('one'));
    }
    expect(order).toEqual(['one']);
    const scope = new ServiceScope();
    void scope.close();
    expect(() => scope.defer('late', () => undefined)).toThrow('late opened while the service stops');
  });
});
