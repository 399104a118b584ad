import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

@Controller()
class HelloController {
  @Get('/healthz') health(): { ok: boolean } { return { ok: true }; }
}
@Module({ controllers: [HelloController] })
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger: false });
  await app.listen(18080, '127.0.0.1');
  console.log('listening');
}
void main();
