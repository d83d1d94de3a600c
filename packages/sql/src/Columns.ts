/** How a boolean is stored: 1 or 0. */
export const bit = (value: boolean): number => value ? 1 : 0
