/** The AppError a promise is refused with (a unit spec's way to check code and message); fails if it is kept. */
import { AppError } from '@mailroom/contracts';

export async function refusalOf(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}
