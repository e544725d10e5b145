import type { Transporter } from 'nodemailer';
import { loadNodemailer } from '../optional-packages.ts';
import type { SendResult } from './delivery.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

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
      await this.transport.sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text });
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
