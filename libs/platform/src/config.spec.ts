import { z } from 'zod';
import { ConfigError, envBool, envInt, parseConfig } from './config';

describe('config', () => {
  const schema = z.object({ PORT: envInt(8080, { min: 1, max: 65535 }), DEBUG: envBool(false), NAME: z.string() });

  it('applies defaults and parses explicit booleans', () => {
    expect(parseConfig(schema, { NAME: 'x' })).toEqual({ PORT: 8080, DEBUG: false, NAME: 'x' });
    expect(parseConfig(schema, { NAME: 'x', DEBUG: 'yes', PORT: '9' })).toEqual({ PORT: 9, DEBUG: true, NAME: 'x' });
  });

  it('lists every problem at once', () => {
    let error: unknown;
    try {
      parseConfig(schema, { PORT: 'eighty', DEBUG: 'maybe' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.split(':')[0])).toEqual(['PORT', 'DEBUG', 'NAME']);
  });
});
