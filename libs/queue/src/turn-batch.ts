/**
 * Gathers the calls made during one turn of the event loop and answers them with one call of
 * `flush` once the turn is over (setImmediate: after the turn's I/O callbacks and their promise
 * jobs, so every reply read from the socket in that turn has had its say).
 *
 * What this is for: the per-shard Redis commands that follow a write, such as the mark and the
 * replicas' acknowledgement. Replies arrive in bunches (one socket read holds many), each reply
 * asks for the same shard-wide commands, and one set of them sent after every write of the bunch
 * covers all of them: a write confirmed by a later mark and WAIT on the same connection is
 * confirmed all the same.
 */
export class TurnBatch<In, Out> {
  private waiting: { input: In; resolve: (out: Out) => void; reject: (err: unknown) => void }[] =
    [];

  /** `flush` answers the inputs of one turn, one output per input and in their order. */
  constructor(private readonly flush: (inputs: In[]) => Promise<Out[]>) {}

  call(input: In): Promise<Out> {
    if (this.waiting.length === 0) setImmediate(() => void this.run());
    return new Promise((resolve, reject) => this.waiting.push({ input, resolve, reject }));
  }

  private async run(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    try {
      const outputs = await this.flush(batch.map((w) => w.input));
      batch.forEach((w, i) => w.resolve(outputs[i] as Out));
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
