export const explainOom = (..._a: unknown[]): never[] => [];
