/**
 * The two out-of-distribution test sets of docs/design.md A.7.
 * - format-OOD: the ID test tasks (minus long_context) posed in the python-list syntax `[func(arg=value)]`;
 *   the system prompt asks for it, the teacher writes it, the checker is the same.
 * - content-OOD: tasks of a family training never sees (reminders), categories base / miss_param / miss_func.
 */
import { OOD_FAMILIES } from './families/index';
import { generateTasks } from './generator';
import { Category, Task } from './task';

/** Suffix of a format-OOD task id: `test-base-003` becomes `test-base-003-py`. */
export const FORMAT_OOD_SUFFIX = '-py';

export function formatOodTasks(testTasks: readonly Task[]): Task[] {
  return testTasks
    .filter((t) => t.category !== 'long_context')
    .map((t) => ({ ...t, id: t.id + FORMAT_OOD_SUFFIX, syntax: 'python' as const }));
}

/** `total` held-out-family tasks split over base / miss_param / miss_func (default 100: 34 / 33 / 33). */
export function contentOodTasks(seed: number, total = 100): Task[] {
  const cats: Category[] = ['base', 'miss_param', 'miss_func'];
  const out: Task[] = [];
  cats.forEach((c, i) => {
    const n = Math.floor(total / cats.length) + (i < total % cats.length ? 1 : 0);
    out.push(...generateTasks(c, n, seed + 1000 * (i + 1), { families: OOD_FAMILIES, idPrefix: 'content_ood' }));
  });
  return out;
}
