/** What the commands say about an argument they do not know: one did-you-mean for all of them. */
import { suggest } from '../base/suggest';

/** `unknown option "--chek"; did you mean --check?` (`flags`: every long option the command takes). */
export function unknownOption(arg: string, flags: readonly string[]): string {
  const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
  const hint = name.startsWith('--') ? suggest(name, flags) : undefined;
  return `unknown option ${JSON.stringify(arg)}${hint ? `; did you mean ${hint}?` : ''}`;
}

/** `unknown command "rendr"; did you mean render?` */
export function unknownCommand(command: string, commands: readonly string[]): string {
  if (command.startsWith('-')) return unknownOption(command, ['--help', '--version']);
  const hint = suggest(command, commands);
  return `unknown command ${JSON.stringify(command)}${hint ? `; did you mean ${hint}?` : ''}`;
}
