// Custom formulas of event segmentation (`m=formula`): functions of the events `A` (`e`) and
// `B` (`e2`), numbers, + − × ÷ and parentheses, case-insensitive, e.g. `UNIQUES(B)/UNIQUES(A)`.

export const FORMULA_FUNCTIONS = ['UNIQUES', 'TOTALS', 'AVG', 'ACTIVE', 'PROPSUM', 'PROPAVG', 'PROPMIN', 'PROPMAX'] as const;
export type FormulaFunction = (typeof FORMULA_FUNCTIONS)[number];

export type Formula =
  | { kind: 'number'; value: number }
  | { kind: 'call'; fn: FormulaFunction; event: number }
  | { kind: 'negate'; operand: Formula }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/'; left: Formula; right: Formula };

export class FormulaError extends Error {}

const TOKEN = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_]+)|(.))/y;

export function parseFormula(text: string): Formula {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match && match.index < text.length; match = TOKEN.exec(text)) {
    const token = match[1] ?? match[2] ?? match[3];
    if (token !== undefined && token.trim() !== '') tokens.push(token);
  }
  let at = 0;
  const peek = () => tokens[at];
  const expect = (token: string) => {
    if (tokens[at]?.toUpperCase() !== token) throw new FormulaError(`Invalid formula ${JSON.stringify(text)}: expected ${token} at token ${at + 1}`);
    at++;
  };
  const sum = (): Formula => {
    let left = product();
    while (peek() === '+' || peek() === '-') left = { kind: 'binary', op: tokens[at++] as '+' | '-', left, right: product() };
    return left;
  };
  const product = (): Formula => {
    let left = unary();
    while (peek() === '*' || peek() === '/') left = { kind: 'binary', op: tokens[at++] as '*' | '/', left, right: unary() };
    return left;
  };
  const unary = (): Formula => {
    if (peek() === '-') {
      at++;
      return { kind: 'negate', operand: unary() };
    }
    const token = tokens[at++];
    if (token === undefined) throw new FormulaError(`Invalid formula ${JSON.stringify(text)}: it ends too early`);
    if (token === '(') {
      const inner = sum();
      expect(')');
      return inner;
    }
    if (/^\d/.test(token)) return { kind: 'number', value: Number(token) };
    const fn = token.toUpperCase() as FormulaFunction;
    if (!FORMULA_FUNCTIONS.includes(fn)) throw new FormulaError(`Invalid formula ${JSON.stringify(text)}: unknown function ${token} (known: ${FORMULA_FUNCTIONS.join(', ')})`);
    expect('(');
    const letter = tokens[at++]?.toUpperCase();
    if (letter !== 'A' && letter !== 'B') throw new FormulaError(`Invalid formula ${JSON.stringify(text)}: ${fn} takes the event A (e) or B (e2)`);
    expect(')');
    return { kind: 'call', fn, event: letter === 'A' ? 0 : 1 };
  };
  const formula = sum();
  if (at < tokens.length) throw new FormulaError(`Invalid formula ${JSON.stringify(text)}: unexpected ${tokens[at]}`);
  return formula;
}

export function formulaCalls(formula: Formula): { fn: FormulaFunction; event: number }[] {
  switch (formula.kind) {
    case 'number':
      return [];
    case 'call':
      return [formula];
    case 'negate':
      return formulaCalls(formula.operand);
    case 'binary':
      return [...formulaCalls(formula.left), ...formulaCalls(formula.right)];
  }
}

/** Evaluates with the value of each call; a division by zero gives 0. */
export function evaluateFormula(formula: Formula, valueOf: (fn: FormulaFunction, event: number) => number): number {
  switch (formula.kind) {
    case 'number':
      return formula.value;
    case 'call':
      return valueOf(formula.fn, formula.event);
    case 'negate':
      return -evaluateFormula(formula.operand, valueOf);
    case 'binary': {
      const left = evaluateFormula(formula.left, valueOf);
      const right = evaluateFormula(formula.right, valueOf);
      if (formula.op === '+') return left + right;
      if (formula.op === '-') return left - right;
      if (formula.op === '*') return left * right;
      return right === 0 ? 0 : left / right;
    }
  }
}
