import { AppError } from './errors';
import { DEFAULT_PLAN_LIMITS, allowsOneMore, checkRoomForOneMore, parsePlanLimits, planLimitError, planSchema, planTableSchema, type PlanLimits } from './plans';

const free = DEFAULT_PLAN_LIMITS.free;

describe('plan names', () => {
  it('names the plans when one is unknown or missing', () => {
    expect(planSchema.safeParse('gold').error?.issues[0]?.message).toBe('unknown plan "gold"; plans are free, pro, enterprise');
    expect(planSchema.safeParse(undefined).error?.issues[0]?.message).toBe('give a plan: free, pro, enterprise');
    expect(planSchema.parse('pro')).toBe('pro');
  });
});

describe('plan limits from configuration', () => {
  it('reads counts and unlimited over the defaults, keeping the limits not named', () => {
    expect(parsePlanLimits('inboxes=25, members=unlimited', free)).toEqual({ ...free, inboxes: 25, members: null });
    expect(parsePlanLimits('', free)).toEqual(free);
    expect(parsePlanLimits('domains=0', free).domains).toBe(0);
  });

  it.each([
    ['inboxes', /not <limit>=<count>/],
    ['inboxes=-1', /not <limit>=<count>/],
    ['inboxes=ten', /not <limit>=<count>/],
    ['mailboxes=3', /unknown limit "mailboxes"; limits are inboxes, domains/],
    ['inboxes=1234567890', /not <limit>=<count>/],
  ])('refuses %s with a message naming it', (text, message) => {
    expect(() => parsePlanLimits(text, free)).toThrow(message);
  });
});

describe('the one too many', () => {
  it('allows up to the limit, and any number when there is none', () => {
    expect(allowsOneMore(free, 'inboxes', 9)).toBe(true);
    expect(allowsOneMore(free, 'inboxes', 10)).toBe(false);
    expect(allowsOneMore(DEFAULT_PLAN_LIMITS.enterprise, 'inboxes', 1_000_000)).toBe(true);
  });

  it('is a 403 plan_limit naming the limit, the plan and the plan that lifts it', () => {
    const err = planLimitError(DEFAULT_PLAN_LIMITS, 'free', 'inboxes');
    expect(err).toBeInstanceOf(AppError);
    expect(err.status).toBe(403);
    expect(err.code).toBe('plan_limit');
    expect(err.message).toBe('the free plan allows 10 inboxes; the pro plan allows 1000: ask for it with POST /api/v1/org/upgrade-request');
    expect(err.details).toEqual([{ path: 'inboxes', message: 'limit 10 on the free plan' }]);
  });

  it('skips a plan that does not hold more, and names none when no plan does', () => {
    const same: PlanLimits = { ...DEFAULT_PLAN_LIMITS.pro, members: 3 };
    const err = planLimitError({ ...DEFAULT_PLAN_LIMITS, pro: same }, 'free', 'members');
    expect(err.message).toMatch(/the enterprise plan has no limit: ask for it/);
    const capped = { free, pro: same, enterprise: { ...DEFAULT_PLAN_LIMITS.enterprise, members: 3 } };
    expect(planLimitError(capped, 'free', 'members').message).toBe('the free plan allows 3 members (pending invitations included)');
  });
});

describe('checking room for one more', () => {
  it('counts only under a limit, and refuses the one too many with plan_limit', async () => {
    let counted = 0;
    const held = (n: number) => async () => (counted++, n);
    await expect(checkRoomForOneMore(DEFAULT_PLAN_LIMITS, 'free', 'environments', held(1))).resolves.toBeUndefined();
    await expect(checkRoomForOneMore(DEFAULT_PLAN_LIMITS, 'free', 'environments', held(2))).rejects.toMatchObject({ code: 'plan_limit', message: expect.stringMatching(/^the free plan allows 2 environments; the pro plan allows 10/) });
    expect(counted).toBe(2);
    await expect(checkRoomForOneMore(DEFAULT_PLAN_LIMITS, 'enterprise', 'environments', held(1_000))).resolves.toBeUndefined();
    expect(counted).toBe(2);
  });

  it('reads a whole table from the wire', () => {
    expect(planTableSchema.parse(JSON.parse(JSON.stringify(DEFAULT_PLAN_LIMITS)))).toEqual(DEFAULT_PLAN_LIMITS);
    expect(planTableSchema.safeParse({ ...DEFAULT_PLAN_LIMITS, pro: { ...DEFAULT_PLAN_LIMITS.pro, inboxes: -1 } }).success).toBe(false);
  });
});
