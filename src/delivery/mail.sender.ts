import type { Transporter } from 'nodemailer';
import { loadNodemailer } from '../optional-packages.ts';
import type { SendResult } from './delivery.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Display name of the sender; the address stays the configured one. */
  fromName?: string;
  replyTo?: string;
  cc?: string[];
  bcc?: string[];
}

/** The address of `Name <address>` or of a bare address. */
const addressOf = (from: string): string => /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from.trim();

/** Sends notification e-mails over SMTP (`SMTP_URL`) with nodemailer. */
export class MailSender {
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    this.transport = loadNodemailer().createTransport(smtpUrl);
  }

  async send(message: MailMessage): Promise<SendResult> {
    try {
      // nodemailer encodes every header; the message's one-line fields were made without line breaks too.
      await this.transport.sendMail({
        from: message.fromName ? { name: message.fromName, address: addressOf(this.from) } : this.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        ...(message.html ? { html: message.html } : {}),
        ...(message.replyTo ? { replyTo: message.replyTo } : {}),
        ...(message.cc?.length ? { cc: message.cc } : {}),
        ...(message.bcc?.length ? { bcc: message.bcc } : {}),
      });
      return { ok: true };
    } catch (error) {
      const e = error as { responseCode?: number; response?: string; code?: string; message?: string };
      return { ok: false, statusCode: e.responseCode, error: String(e.response ?? e.code ?? e.message ?? error).slice(0, 500) };
    }
  }

  close(): void {
    this.transport.close();
  }
}
