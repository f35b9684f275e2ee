/**
 * Device and app signature lines as the clients write them, per language (the phones' mail
 * apps, Outlook mobile, Yahoo, Mail for Windows, Samsung, Huawei, BlackBerry, Proton, K-9, GMX,
 * WEB.DE, Mail.ru, Yandex, NetEase): each, below new text and above unmarked history, ends the
 * new text and is removed. Beside them, sentences that start or end like one and are text.
 */
import { extractText } from './extract-text';

const DEVICE_LINES: Record<string, string[]> = {
  en: [
    'Sent from my iPhone', 'Sent from my Samsung Galaxy smartphone.', 'Sent from Yahoo Mail for iPhone', 'Sent from Outlook',
    'Sent from Mail for Windows', 'Sent from my BlackBerry 10 smartphone.', 'Sent from my BlackBerry® wireless device',
    'Sent with Proton Mail secure email.', 'Sent from Proton Mail mobile', 'Sent from my HUAWEI P30', 'Get Outlook for Android',
    'Sent from Gmail Mobile', 'Sent from my Android phone with GMX Mail. Please excuse my brevity.', 'Sent from my mobile device',
    'Sent from my Sony Xperia™ smartphone', 'Sent from my Windows Phone', 'Sent from BlueMail', 'Sent from myMail for iOS',
    'Sent from Nine', 'Sent from my T-Mobile 4G LTE Device', 'Sent via the Samsung Galaxy S7, an AT&T 4G LTE smartphone',
    'Sent from Outlook for iOS<https://aka.ms/o0ukef>', 'Sent from my iPhone 12 Pro Max',
  ],
  de: [
    'Von meinem iPad gesendet', 'Gesendet von Yahoo Mail auf Android', 'Gesendet von Mail für Windows 10',
    'Gesendet mit der WEB.DE Mail App', 'Gesendet mit der GMX Mail App', 'Gesendet von meinem BlackBerry 10-Smartphone.',
    'Gesendet von meinem Huawei-Telefon', 'Outlook für Android herunterladen<https://aka.ms/ghei36>', 'Gesendet mit der Telekom Mail App',
    'Gesendet von iPhone',
  ],
  fr: [
    'Envoyé de mon iPad', 'Envoyé depuis mon appareil Galaxy', 'Envoyé depuis mon smartphone Samsung Galaxy.',
    'Envoyé de Yahoo Mail pour Android', 'Envoyé à partir de Outlook pour Android', 'Envoyé à partir de Courrier pour Windows 10',
    'Obtenir Outlook pour Android<https://aka.ms/ghei36>', 'Envoyé avec Proton Mail sécurisé.', 'Provenance : Courrier pour Windows 10',
    'Envoyé de mon téléphone Huawei',
  ],
  es: [
    'Enviado desde mi iPad', 'Enviado desde Yahoo Mail para Android', 'Enviado desde Correo para Windows 10',
    'Obtener Outlook para iOS<https://aka.ms/o0ukef>', 'Enviado desde mi dispositivo Huawei', 'Enviado con Proton Mail seguro',
    'Enviado desde mi Samsung Galaxy S10',
  ],
  it: [
    'Inviato dal mio iPhone', 'Inviato da Yahoo Mail su Android', 'Inviato da Posta per Windows 10',
    'Inviato dal mio smartphone Samsung Galaxy.', 'Inviato dal mio dispositivo Huawei', 'Inviato da Libero Mail per Android',
    'Inviato con Proton Mail',
  ],
  pt: [
    'Enviado do meu iPad', 'Enviado do Yahoo Mail para Android', 'Enviado do meu smartphone Samsung Galaxy.',
    'Obter o Outlook para iOS<https://aka.ms/o0ukef>', 'Enviado do Email para Windows 10',
    'Enviado a partir do meu smartphone Samsung Galaxy.', 'Enviado do Outlook',
  ],
  nl: [
    'Verzonden vanaf mijn iPad', 'Verzonden met Yahoo Mail voor Android', 'Verzonden vanaf mijn Samsung Galaxy-smartphone.',
    'Verzonden met BlackBerry Work', 'Verstuurd vanaf mijn iPad',
  ],
  da: [
    'Sendt fra min iPad', 'Sendt fra Yahoo Mail på Android', 'Sendt fra Mail til Windows 10', 'Hent Outlook til iOS<https://aka.ms/o0ukef>',
    'Sendt fra min Samsung Galaxy-smartphone.',
  ],
  nb: ['Sendt fra E-post for Windows 10', 'Få Outlook for iOS<https://aka.ms/o0ukef>', 'Sendt fra min Samsung Galaxy-smarttelefon.'],
  sv: [
    'Skickades från Yahoo Mail på Android', 'Skickat från E-post för Windows 10', 'Hämta Outlook för iOS<https://aka.ms/o0ukef>',
    'Skickat från min Samsung Galaxy-smarttelefon.', 'Skickat från min iPad',
  ],
  fi: [
    'Lähetetty iPadista', 'Lähetetty Samsung Galaxy -älypuhelimesta', 'Lähetetty Android-laitteesta',
    'Lähetetty Yahoo Mail -sovelluksesta Androidille',
  ],
  pl: [
    'Wysłane z mojego iPhone\'a', 'Wysłano z aplikacji Poczta w systemie Windows 10', 'Wysłane z mojego smartfona Galaxy',
    'Wysłane z aplikacji Yahoo Poczta na Androida',
  ],
  cs: ['Odesláno z mého iPhonu', 'Odesláno z Pošty pro Windows 10', 'Odesláno z mého smartphonu Samsung Galaxy.'],
  ru: [
    'Отправлено с iPad', 'Отправлено из мобильной Яндекс.Почты', 'Отправлено с помощью приложения Почта для Windows 10',
    'Отправлено с моего Samsung Galaxy', 'Отправлено из Почты для Windows',
  ],
  uk: ['Надіслано з мого iPhone', 'Надіслано з програми «Пошта» для Windows 10'],
  tr: [
    'iPad\'imden gönderildi', 'Windows 10 için Posta\'dan gönderildi',
    'Android için Yahoo Mail\'den gönderildi',
  ],
  ja: ['iPadから送信', 'Windows 10 版のメールから送信', 'Galaxy スマートフォンから送信', 'Android の Yahoo メールから送信', 'iPhoneから送信しました'],
  zh: ['发自我的 iPad', '从 Windows 10 版邮件发送', '获取 Outlook for iOS<https://aka.ms/o0ukef>', '发自网易邮箱大师', '從我的iPad傳送'],
  ko: ['나의 iPhone에서 보냄', 'Windows 10용 메일에서 보냄', 'iOS용 Outlook 받기<https://aka.ms/o0ukef>', 'Samsung Galaxy 스마트폰에서 보냈습니다.'],
  ar: [
    'مرسل من iPhone', 'تم الإرسال من هاتف Samsung Galaxy الذكي.', 'الحصول على Outlook لـ iOS<https://aka.ms/o0ukef>',
    'أرسلت من جهاز iPad الخاص بي',
  ],
  he: ['נשלח מ-iPhone', 'קבל את Outlook עבור iOS<https://aka.ms/o0ukef>', 'נשלח מהטלפון החכם Samsung Galaxy שלי.'],
};

const SENTENCES = [
  'Von meinem Büro aus kann ich das leider nicht prüfen.',
  'Von meinem Handy aus geht das leider nicht, ich mache es morgen.',
  'Ich habe es per Mail gesendet.',
  'Mail wurde gestern gesendet.',
  'Gesendet von Anna im Namen des ganzen Teams, vielen Dank!',
  'Sent from my desk, the phone is broken.',
  'Sent from my laptop at the airport, so the attachment is small.',
  'Envoyé de mon bureau, car le téléphone ne marche pas.',
  'Enviado desde la oficina central, el paquete llega el viernes.',
  'Inviato da poco il pacco, dovrebbe arrivare venerdì.',
];

describe('device and app lines', () => {
  it.each(Object.entries(DEVICE_LINES).flatMap(([lang, list]) => list.map((line) => ({ lang, line }))))('$lang: $line', ({ line }) => {
    expect(extractText({ text: `Ok\n\n${line}\n\nAre you in today?` })).toBe('Ok');
  });

  it.each(SENTENCES)('keeps the sentence %s', (sentence) => {
    const text = `Hi,\n\n${sentence}\n\nAnn`;
    expect(extractText({ text })).toBe(text);
  });
});
