/** The environments: API families, tasks, checker, episodes, teacher, hints, corpus, OOD, data, evaluation. */
export * from './task';
export * from './families/index';
export { canonicalJson, deepEqualJson, cloneJson, toText, CallResult } from './families/base';
export * from './generator';
export * from './checker';
export * from './episode';
export * from './teacher';
export * from './hints';
export * from './corpus';
export * from './ood';
export * from './data';
export * from './evaluate';
