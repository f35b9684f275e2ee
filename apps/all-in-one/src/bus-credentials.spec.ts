import { parseBusArgs, UsageError } from './bus-credentials';

describe('bus-credentials arguments', () => {
  it('reads the directory and the options', () => {
    expect(parseBusArgs(['out'])).toEqual({ help: false, dir: 'out', namespace: '', force: false, refresh: false });
    expect(parseBusArgs(['out', '--namespace', 'prod', '--force'])).toEqual({ help: false, dir: 'out', namespace: 'prod', force: true, refresh: false });
    expect(parseBusArgs(['out', '--refresh'])).toMatchObject({ dir: 'out', refresh: true, force: false });
    expect(parseBusArgs(['out', '--reissue', 'webhooks'])).toMatchObject({ dir: 'out', reissue: 'webhooks' });
    expect(parseBusArgs(['out', '--help'])).toEqual({ help: true });
  });

  it.each([
    [[], /needs the directory/],
    [['--force'], /needs the directory/],
    [['out', '--reissue'], /--reissue needs a value/],
    [['out', '--reissue', '--force'], /--reissue needs a value/],
    [['out', '--reissue', 'postfix'], /--reissue takes one of .*not "postfix"/],
    [['out', '--namespace', 'a.b'], /--namespace takes letters/],
    [['out', '--forse'], /unknown argument "--forse"/],
    [['out', '--reissue', 'gateway', '--force'], /do not go together/],
    [['out', '--refresh', '--force'], /do not go together/],
    [['out', '--refresh', '--reissue', 'gateway'], /do not go together/],
  ])('refuses %j', (args, message) => {
    expect(() => parseBusArgs(args as string[])).toThrow(UsageError);
    expect(() => parseBusArgs(args as string[])).toThrow(message);
  });
});
