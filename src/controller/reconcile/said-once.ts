/**
 * What a side task last said about each thing it keeps (an account, a resource group, a changefeed),
 * so that a standing Warning is said once, and said again only when it changes or comes back.
 */
export class SaidOnce {
  private readonly said = new Map<string, string>();

  /** Whether `message` about `subject` is news; it is remembered as said. */
  news(subject: string, message: string): boolean {
    if (this.said.get(subject) === message) return false;
    this.said.set(subject, message);
    return true;
  }

  /** What was said about `subject` no longer stands. */
  forget(subject: string): void {
    this.said.delete(subject);
  }
}
