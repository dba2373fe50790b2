// The rule templates docs/decisions.md and the Rules page offer compile.
import { describe, expect, it } from 'vitest';
import { RULE_TEMPLATES } from '../../../contract/ruleTemplates.js';
import { checkExpression } from '../../../server/decisions/engine.js';

describe('rule templates', () => {
  it('every template type-checks as a boolean expression', () => {
    expect(RULE_TEMPLATES.map((t) => [t.id, checkExpression(t.expression)])).toEqual(RULE_TEMPLATES.map((t) => [t.id, null]));
    expect(new Set(RULE_TEMPLATES.map((t) => t.id)).size).toBe(RULE_TEMPLATES.length);
  });
});
