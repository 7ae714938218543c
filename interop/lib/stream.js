export const scenarios = () => ({});
