/**
 * Why the gateway's search body keeps its JSON schema while the control plane validates
 * with class-validator: the cost of validating one typical POST /v1/search body with the
 * gateway's compiled schema (Ajv through Fastify's compiler, exactly as the route uses it)
 * against the same rules as a class-validator DTO through the control plane's one pipe
 * (@svc/http-edge DtoValidationPipe: U+0000 scan, class-transformer, class-validator).
 * Both are given the parsed object (JSON.parse is the same for both). Alternating rounds in
 * one process; the median ns per body of each. Prints Markdown and writes
 * bench/results/validation.json.
 *
 * Env: ROUNDS (7), PER_ROUND (50000).
 */
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { validateDto } from '@svc/http-edge';
import { SEARCH_BODY_SCHEMA, searchValidatorCompiler } from '@svc/search-gateway';
import { median, writeResult } from './lib-results';

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const PER_ROUND = Number(process.env.PER_ROUND ?? 50_000);

class SearchBodyDto {
  @IsString()
  query!: string;

  @IsOptional()
  @IsString()
  model?: string;

  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(10)
  @IsString({ each: true })
  models?: string[];

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  max_results?: number;
}

const BODY = { query: 'rust async runtimes compared', models: ['exa/fast', 'brave/web'], max_results: 5 };

async function main(): Promise<void> {
  const validate = searchValidatorCompiler({ schema: SEARCH_BODY_SCHEMA, method: 'POST', url: '/v1/search', httpPart: 'body' });
  const ajvNs: number[] = [];
  const dtoNs: number[] = [];
  const runAjv = (): number => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < PER_ROUND; i++) {
      const result = validate({ ...BODY });
      if (result !== true && typeof result === 'object' && result !== null && 'error' in result) throw new Error('schema refused a valid body');
    }
    return Number(process.hrtime.bigint() - start) / PER_ROUND;
  };
  const runDto = async (): Promise<number> => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < PER_ROUND; i++) await validateDto(SearchBodyDto, { ...BODY }, 'body');
    return Number(process.hrtime.bigint() - start) / PER_ROUND;
  };
  runAjv();
  await runDto();
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      ajvNs.push(runAjv());
      dtoNs.push(await runDto());
    } else {
      dtoNs.push(await runDto());
      ajvNs.push(runAjv());
    }
  }
  const result = { rounds: ROUNDS, per_round: PER_ROUND, ajv_ns_per_body: median(ajvNs), class_validator_ns_per_body: median(dtoNs), ajv_rounds: ajvNs, class_validator_rounds: dtoNs };
  writeResult('validation', result);
  console.log(`\n| validator (one POST /v1/search body) | median ns per body |\n|---|---|\n| JSON schema (Ajv, the gateway's route) | ${result.ajv_ns_per_body.toFixed(0)} |\n| class-validator DTO through DtoValidationPipe | ${result.class_validator_ns_per_body.toFixed(0)} |`);
  console.log(`\nratio: class-validator costs ${(result.class_validator_ns_per_body / result.ajv_ns_per_body).toFixed(1)}x the schema (${ROUNDS} rounds of ${PER_ROUND})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
