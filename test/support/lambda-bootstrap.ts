/**
 * The arguments AWS Lambda's Node.js runtime gives node before the entry script (its bootstrap
 * script, as published for nodejs18.x): `--expose-gc`, its HTTP header size (a flag and its value,
 * two arguments), a tenth of the memory for the young generation (half of it a semi-space, integer
 * division as the script's `expr` does) and the rest for the old one. The deploy rehearsal and the
 * bench start node with these, so one copy of the bootstrap's shape serves both.
 */
export function lambdaNodeFlags(memoryMb: number): string[] {
  const young = Math.floor(memoryMb / 10);
  return [
    '--expose-gc',
    '--max-http-header-size',
    '81920',
    `--max-semi-space-size=${Math.floor(young / 2)}`,
    `--max-old-space-size=${memoryMb - young}`,
  ];
}
