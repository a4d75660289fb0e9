// Owners and the small reference resources (internet providers and plans, insurance providers and products,
// platforms, metrics) for the source-data generator. Brand names and homepages are real; every other figure
// (prices, fees, speeds, availability) is synthetic sample data.
import type {
  InsuranceProductRec,
  InsuranceProviderRec,
  InternetPlanRec,
  InternetProviderRec,
  Locale,
  MetricRec,
  OwnerRec,
  PlatformRec,
} from '../build-snapshot/source-schema.ts';
import { CITIES } from './places.ts';
import {
  chance,
  DAY_MS,
  int,
  iso,
  type LocaleSet,
  localized,
  only,
  pad,
  permutation,
  pick,
  pickLocales,
  REFERENCE_MS,
  type Rng,
  rngFor,
  slugify,
  type Tr,
  Weighted,
} from './random.ts';

const ALL: LocaleSet = ['en', 'nl', 'de', 'fr', 'es'];
const recent = (rng: Rng, maxDays: number) =>
  iso(REFERENCE_MS - int(rng, 1, maxDays) * DAY_MS - int(rng, 0, 86_399) * 1000);
const joinList = (items: string[], and: string) =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} ${and} ${items.at(-1)}`;
const AND: Tr = { en: 'and', nl: 'en', de: 'und', fr: 'et', es: 'y' };

// ---------------------------------------------------------------------------------------------------- owners

export type OwnerType = 'private_landlord' | 'agency' | 'housing_corporation' | 'investor';
export interface OwnerInfo {
  id: string;
  slug: string;
  type: OwnerType;
  /** Index into CITIES of the owner's home city, or -1 for owners active nationwide. */
  home: number;
}

const SURNAMES = [
  'de Jong',
  'Jansen',
  'de Vries',
  'van den Berg',
  'van Dijk',
  'Bakker',
  'Janssen',
  'Visser',
  'Smit',
  'Meijer',
  'de Boer',
  'Mulder',
  'de Groot',
  'Bos',
  'Vos',
  'Peters',
  'Hendriks',
  'van Leeuwen',
  'Dekker',
  'Brouwer',
  'de Wit',
  'Dijkstra',
  'Smits',
  'de Graaf',
  'van der Meer',
  'Kok',
  'Jacobs',
  'de Haan',
  'Vermeulen',
  'van den Heuvel',
  'Postma',
  'Kuipers',
  'Hoekstra',
  'Verbeek',
  'Prins',
];
const WORDS = [
  'Linde',
  'Eik',
  'Kade',
  'Haven',
  'Poort',
  'Duin',
  'Polder',
  'Gracht',
  'Brug',
  'Molen',
  'Oever',
  'Veste',
  'Delta',
  'Horizon',
  'Lindeboom',
  'Kempen',
  'Veluwe',
  'Amstel',
  'Maas',
  'IJssel',
  'Rijn',
  'Eem',
  'Wadden',
  'Dommel',
  'Vecht',
  'Zuiderzee',
  'Hof',
  'Singel',
];
const CERTIFICATIONS = ['NVM', 'VBO', 'Vastgoedpro', 'SCVM'];

/** A surname without initials, as in a company name: "De Vries". */
const surname = (rng: Rng) => pick(rng, SURNAMES).replace(/^[a-z]/, (c) => c.toUpperCase());

function ownerName(rng: Rng, type: OwnerType, home: number): string {
  const city = home >= 0 ? CITIES[home]!.name.nl! : 'Holland';
  switch (type) {
    case 'private_landlord':
      return `${String.fromCharCode(65 + int(rng, 0, 25))}. ${pick(rng, SURNAMES)}`; // "J. de Vries": prefix stays lower case
    case 'agency':
      return pick(rng, [
        `${surname(rng)} Makelaars`,
        `${city} Rentals`,
        `${pick(rng, WORDS)} Wonen`,
        `${surname(rng)} & ${surname(rng)} Vastgoed`,
        `Verhuurkantoor ${pick(rng, WORDS)}`,
      ]);
    case 'housing_corporation':
      return pick(rng, [
        `Woonstichting ${pick(rng, WORDS)}`,
        `Wooncorporatie ${pick(rng, WORDS)}`,
        `${pick(rng, WORDS)} Woongoed`,
      ]);
    case 'investor':
      return pick(rng, [
        `${pick(rng, WORDS)} Residential`,
        `${pick(rng, WORDS)} Vastgoedfonds`,
        `${pick(rng, WORDS)} Property Partners`,
      ]);
  }
}

const OWNER_SHORT: Record<OwnerType, Tr> = {
  private_landlord: {
    en: 'Private landlord renting out homes {where}.',
    nl: 'Particuliere verhuurder met woningen {where}.',
    de: 'Privatvermieter mit Wohnungen {where}.',
    fr: 'Propriétaire particulier louant des logements {where}.',
    es: 'Propietario particular que alquila viviendas {where}.',
  },
  agency: {
    en: 'Rental agency active {where}.',
    nl: 'Verhuurmakelaar, actief {where}.',
    de: 'Vermietungsmakler, tätig {where}.',
    fr: 'Agence de location active {where}.',
    es: 'Agencia de alquiler activa {where}.',
  },
  housing_corporation: {
    en: 'Housing corporation providing social and mid-rent homes {where}.',
    nl: 'Woningcorporatie met sociale huur- en middenhuurwoningen {where}.',
    de: 'Wohnungsbaugesellschaft mit Sozial- und Mittelmietwohnungen {where}.',
    fr: 'Bailleur social proposant des logements sociaux et intermédiaires {where}.',
    es: 'Corporación de vivienda con viviendas sociales y de alquiler medio {where}.',
  },
  investor: {
    en: 'Residential investor with a portfolio {where}.',
    nl: 'Woningbelegger met een portefeuille {where}.',
    de: 'Wohnimmobilieninvestor mit einem Portfolio {where}.',
    fr: 'Investisseur résidentiel avec un portefeuille {where}.',
    es: 'Inversor residencial con una cartera de viviendas {where}.',
  },
};
const NATIONWIDE: Tr = {
  en: 'across the Netherlands',
  nl: 'in heel Nederland',
  de: 'in den ganzen Niederlanden',
  fr: 'dans tous les Pays-Bas',
  es: 'en todos los Países Bajos',
};
const IN: Tr = { en: 'in', nl: 'in', de: 'in', fr: 'à', es: 'en' };
const OWNER_POINTS: Tr<string[]> = {
  en: ['Viewings by appointment', 'We respond to enquiries within two working days', 'Rent is paid monthly in advance'],
  nl: [
    'Bezichtigingen op afspraak',
    'We reageren binnen twee werkdagen op vragen',
    'De huur wordt maandelijks vooraf betaald',
  ],
  de: [
    'Besichtigungen nach Vereinbarung',
    'Wir beantworten Anfragen innerhalb von zwei Werktagen',
    'Die Miete ist monatlich im Voraus zu zahlen',
  ],
  fr: [
    'Visites sur rendez-vous',
    'Nous répondons aux demandes sous deux jours ouvrés',
    "Le loyer est payable mensuellement d'avance",
  ],
  es: [
    'Visitas con cita previa',
    'Respondemos a las consultas en dos días laborables',
    'El alquiler se paga por mensualidades anticipadas',
  ],
};
const AREA_CODES = [
  '20',
  '10',
  '70',
  '30',
  '40',
  '50',
  '13',
  '76',
  '24',
  '26',
  '23',
  '53',
  '33',
  '73',
  '38',
  '71',
  '43',
  '78',
  '58',
  '72',
  '15',
  '57',
  '35',
  '36',
];

/** Owners plus, for listings, who owns what: nationwide owners (about 40% of listings) and per-city local owners,
 *  each group weighted by a power law (weight 1/rank), so a few owners hold a large share of all listings. */
export interface Owners {
  records: OwnerRec[];
  info: OwnerInfo[];
  national: Weighted<number>;
  /** Per city index: its local owners, or null when the city has none. */
  local: (Weighted<number> | null)[];
}

const OWNER_CITY = new Weighted(
  CITIES.map((_c, i) => i),
  CITIES.map((_c, i) => 1 / (i + 1) ** 0.95),
);
const OWNER_TYPE = Weighted.of<OwnerType>([
  ['private_landlord', 45],
  ['agency', 35],
  ['housing_corporation', 7],
  ['investor', 13],
]);
const BIG_OWNER_TYPE = Weighted.of<OwnerType>([
  ['agency', 45],
  ['investor', 35],
  ['housing_corporation', 20],
]);

/** Owner `i` (0-based): nationwide (`big`) or at home in one city; every draw in a fixed order. */
function makeOwner(rng: Rng, i: number, big: boolean): { record: OwnerRec; info: OwnerInfo } {
  const id = `own_${pad(i + 1, 5)}`;
  const type = big ? BIG_OWNER_TYPE.pick(rng) : OWNER_TYPE.pick(rng);
  const home = big ? -1 : OWNER_CITY.pick(rng);
  const name = type === 'private_landlord' && chance(rng, 0.05) ? null : ownerName(rng, type, home);
  const slug = `${slugify(name ?? type)}-${pad(i + 1, 5)}`;
  const domain = `${slugify(name ?? type).replace(/-/g, '')}.example.nl`;
  const company = type !== 'private_landlord';
  const where = (l: Locale) =>
    home < 0 ? NATIONWIDE[l]! : `${IN[l]} ${CITIES[home]!.name[l] ?? CITIES[home]!.name.en}`;
  const locales = pickLocales(rng, { nl: 0.55, de: 0.15, fr: 0.12, es: 0.12 });
  const short = chance(rng, 0.8) ? localized(locales, (l) => OWNER_SHORT[type][l]!.replace('{where}', where(l))) : null;
  const areas =
    home < 0
      ? [...new Set(Array.from({ length: int(rng, 5, 12) }, () => CITIES[OWNER_CITY.pick(rng)]!.name.en))]
      : [...new Set([CITIES[home]!.name.en, ...(chance(rng, 0.3) ? [CITIES[OWNER_CITY.pick(rng)]!.name.en] : [])])];
  const record: OwnerRec = {
    id,
    slug,
    name,
    type: chance(rng, 0.03) ? null : type,
    website_url: company && chance(rng, 0.85) ? `https://www.${domain}` : null,
    image_url: chance(rng, 0.4) ? `https://images.example.nl/owners/${id}.png` : null,
    phone_numbers: chance(rng, 0.2)
      ? null
      : Array.from({ length: int(rng, 1, 2) }, () => `+31 ${pick(rng, AREA_CODES)} 000 ${pad(int(rng, 0, 9999), 4)}`),
    emails: chance(rng, 0.25)
      ? null
      : company
        ? [`info@${domain}`, ...(chance(rng, 0.3) ? [`verhuur@${domain}`] : [])]
        : [`${slug}@mail.example.nl`],
    areas_served: chance(rng, 0.15) ? null : areas,
    certifications:
      type === 'agency' ? (chance(rng, 0.3) ? null : CERTIFICATIONS.filter(() => chance(rng, 0.35))) : null,
    description_short: short,
    description:
      short && chance(rng, 0.6)
        ? localized(
            locales,
            (l) => `${name ? `**${name}**: ` : ''}${short[l]}\n\n${OWNER_POINTS[l]!.map((p) => `- ${p}`).join('\n')}`,
          )
        : null,
    published: !chance(rng, 0.06),
    updated_at: chance(rng, 0.15) ? null : recent(rng, 700),
  };
  return { record, info: { id, slug, type, home } };
}

export function buildOwners(seed: number, count: number): Owners {
  const rng = rngFor(seed, 'owners');
  const rank = permutation(rng, count);
  const national = Math.max(3, Math.ceil(count * 0.01));
  const records: OwnerRec[] = [];
  const info: OwnerInfo[] = [];
  for (let i = 0; i < count; i++) {
    const owner = makeOwner(rng, i, rank[i]! < national);
    records.push(owner.record);
    info.push(owner.info);
  }
  const group = (keep: (o: OwnerInfo) => boolean) => {
    const idx = info.flatMap((o, i) => (keep(o) ? [i] : []));
    return idx.length
      ? new Weighted(
          idx,
          idx.map((i) => 1 / (rank[i]! + 1)),
        )
      : null;
  };
  return {
    records,
    info,
    national: group((o) => o.home < 0)!,
    local: CITIES.map((_c, ci) => group((o) => o.home === ci)),
  };
}

// ---------------------------------------------------------------------------------------------------- internet

type Conn = 'fiber' | 'cable' | 'dsl' | '5g';
const CONN: Record<Conn, Tr & { product: string }> = {
  fiber: {
    product: 'Glasvezel',
    en: 'fiber',
    nl: 'glasvezel',
    de: 'Glasfaser',
    fr: 'fibre optique',
    es: 'fibra óptica',
  },
  cable: { product: 'Internet', en: 'cable', nl: 'de kabel', de: 'Kabel', fr: 'câble', es: 'cable' },
  dsl: { product: 'DSL', en: 'DSL', nl: 'DSL', de: 'DSL', fr: 'DSL', es: 'DSL' },
  '5g': { product: '5G Thuis', en: '5G', nl: '5G', de: '5G', fr: '5G', es: '5G' },
};
const STRENGTH: Record<string, Tr> = {
  nationwide: {
    en: 'Nationwide fiber network',
    nl: 'Landelijk glasvezelnetwerk',
    de: 'Landesweites Glasfasernetz',
    fr: 'Réseau de fibre national',
    es: 'Red de fibra nacional',
  },
  symmetric: {
    en: 'Symmetrical upload speeds',
    nl: 'Even snel uploaden als downloaden',
    de: 'Symmetrische Upload-Geschwindigkeiten',
    fr: 'Débits montants symétriques',
    es: 'Velocidades de subida simétricas',
  },
  cable: {
    en: 'Wide cable coverage',
    nl: 'Grote kabeldekking',
    de: 'Große Kabelabdeckung',
    fr: 'Large couverture par câble',
    es: 'Amplia cobertura de cable',
  },
  monthly: {
    en: 'Monthly cancellable plans',
    nl: 'Maandelijks opzegbare abonnementen',
    de: 'Monatlich kündbare Tarife',
    fr: 'Offres résiliables chaque mois',
    es: 'Planes cancelables cada mes',
  },
  cheap: { en: 'Low prices', nl: 'Lage prijzen', de: 'Niedrige Preise', fr: 'Prix bas', es: 'Precios bajos' },
  english: {
    en: 'English-language customer service',
    nl: 'Engelstalige klantenservice',
    de: 'Englischsprachiger Kundendienst',
    fr: 'Service client en anglais',
    es: 'Atención al cliente en inglés',
  },
  bundles: {
    en: 'TV and mobile bundles',
    nl: 'Bundels met tv en mobiel',
    de: 'Pakete mit TV und Mobilfunk',
    fr: 'Offres groupées avec TV et mobile',
    es: 'Paquetes con TV y móvil',
  },
  fiveg: {
    en: '5G home internet without installation',
    nl: 'Thuisinternet via 5G zonder installatie',
    de: '5G-Internet für Zuhause ohne Installation',
    fr: 'Internet 5G à domicile sans installation',
    es: 'Internet 5G en casa sin instalación',
  },
  privacy: {
    en: 'Privacy-focused provider',
    nl: 'Provider met aandacht voor privacy',
    de: 'Anbieter mit Fokus auf Datenschutz',
    fr: 'Fournisseur attaché à la vie privée',
    es: 'Proveedor centrado en la privacidad',
  },
};
const CONSIDERATION: Record<string, Tr> = {
  coverage: {
    en: 'Fiber is not available at every address',
    nl: 'Glasvezel is niet op elk adres beschikbaar',
    de: 'Glasfaser ist nicht an jeder Adresse verfügbar',
    fr: "La fibre n'est pas disponible à toutes les adresses",
    es: 'La fibra no está disponible en todas las direcciones',
  },
  intro: {
    en: 'Higher regular price after the introductory period',
    nl: 'Hogere prijs na de introductieperiode',
    de: 'Höherer Preis nach dem Einführungszeitraum',
    fr: 'Prix plus élevé après la période de lancement',
    es: 'Precio más alto tras el periodo promocional',
  },
  upload: {
    en: 'Upload is much slower than download on cable',
    nl: 'Uploaden gaat via de kabel veel langzamer dan downloaden',
    de: 'Upload über Kabel deutlich langsamer als Download',
    fr: 'Sur le câble, le débit montant est bien inférieur au débit descendant',
    es: 'Por cable, la subida es mucho más lenta que la bajada',
  },
  regional: {
    en: 'Regional coverage only',
    nl: 'Alleen regionale dekking',
    de: 'Nur regionale Abdeckung',
    fr: 'Couverture régionale uniquement',
    es: 'Solo cobertura regional',
  },
  dutch: {
    en: 'Customer service mainly in Dutch',
    nl: 'Klantenservice vooral in het Nederlands',
    de: 'Kundendienst überwiegend auf Niederländisch',
    fr: 'Service client principalement en néerlandais',
    es: 'Atención al cliente principalmente en neerlandés',
  },
  mobile: {
    en: 'Speed depends on mobile coverage',
    nl: 'Snelheid hangt af van de mobiele dekking',
    de: 'Geschwindigkeit hängt von der Mobilfunkabdeckung ab',
    fr: 'Le débit dépend de la couverture mobile',
    es: 'La velocidad depende de la cobertura móvil',
  },
};

interface IspDef {
  name: string;
  url: string;
  plans: [Conn, number, number][]; // connection, download, upload (Mbit/s)
  priceFactor: number;
  strengths: string[];
  considerations: string[];
  languages: string[];
  published?: false;
}
const ISPS: IspDef[] = [
  {
    name: 'KPN',
    url: 'https://www.kpn.com',
    priceFactor: 1.08,
    languages: ['nl', 'en'],
    strengths: ['nationwide', 'symmetric', 'bundles'],
    considerations: ['coverage', 'intro'],
    plans: [
      ['fiber', 100, 100],
      ['fiber', 500, 500],
      ['fiber', 1000, 1000],
      ['fiber', 4000, 4000],
      ['dsl', 100, 30],
      ['dsl', 200, 40],
    ],
  },
  {
    name: 'Ziggo',
    url: 'https://www.ziggo.nl',
    priceFactor: 1.0,
    languages: ['nl', 'en'],
    strengths: ['cable', 'bundles'],
    considerations: ['upload', 'intro'],
    plans: [
      ['cable', 100, 10],
      ['cable', 400, 40],
      ['cable', 500, 50],
      ['cable', 1000, 100],
      ['cable', 2000, 200],
    ],
  },
  {
    name: 'Odido',
    url: 'https://www.odido.nl',
    priceFactor: 0.97,
    languages: ['nl', 'en'],
    strengths: ['bundles', 'fiveg'],
    considerations: ['mobile', 'intro'],
    plans: [
      ['fiber', 100, 100],
      ['fiber', 500, 500],
      ['fiber', 1000, 1000],
      ['dsl', 50, 6],
      ['dsl', 100, 30],
      ['5g', 300, 50],
    ],
  },
  {
    name: 'Delta Fiber',
    url: 'https://www.delta.nl',
    priceFactor: 0.95,
    languages: ['nl'],
    strengths: ['symmetric', 'bundles'],
    considerations: ['regional', 'dutch'],
    plans: [
      ['fiber', 100, 100],
      ['fiber', 500, 500],
      ['fiber', 1000, 1000],
      ['fiber', 2000, 2000],
    ],
  },
  {
    name: 'Youfone',
    url: 'https://www.youfone.nl',
    priceFactor: 0.85,
    languages: ['nl'],
    strengths: ['cheap', 'monthly'],
    considerations: ['dutch', 'coverage'],
    plans: [
      ['fiber', 100, 100],
      ['fiber', 500, 500],
      ['fiber', 1000, 1000],
      ['dsl', 50, 6],
      ['dsl', 100, 30],
    ],
  },
  {
    name: 'Freedom Internet',
    url: 'https://www.freedom.nl',
    priceFactor: 1.02,
    languages: ['nl', 'en'],
    strengths: ['privacy', 'symmetric', 'english'],
    considerations: ['coverage'],
    plans: [
      ['fiber', 100, 100],
      ['fiber', 500, 500],
      ['fiber', 1000, 1000],
      ['dsl', 100, 30],
    ],
  },
  {
    name: 'Tweak',
    url: 'https://www.tweak.nl',
    priceFactor: 0.95,
    languages: ['nl'],
    strengths: ['symmetric', 'monthly'],
    considerations: ['coverage', 'dutch'],
    plans: [
      ['fiber', 500, 500],
      ['fiber', 1000, 1000],
      ['fiber', 4000, 4000],
      ['fiber', 8000, 8000],
    ],
  },
  {
    name: 'Caiway',
    url: 'https://www.caiway.nl',
    priceFactor: 0.98,
    languages: ['nl'],
    strengths: ['bundles'],
    considerations: ['regional', 'dutch'],
    published: false,
    plans: [
      ['fiber', 150, 150],
      ['fiber', 500, 500],
      ['cable', 100, 10],
      ['cable', 400, 40],
    ],
  },
];

const ISP_DESCRIPTION: Tr = {
  en: '{name} offers home internet over {conn} in the Netherlands.',
  nl: '{name} biedt thuisinternet via {conn} in Nederland.',
  de: '{name} bietet Internet für Zuhause über {conn} in den Niederlanden an.',
  fr: "{name} propose l'internet à domicile par {conn} aux Pays-Bas.",
  es: '{name} ofrece internet en casa por {conn} en los Países Bajos.',
};
const ISP_SUPPORT: Tr = {
  en: 'Support by phone, chat and e-mail. Check availability at your address with your postcode and house number before ordering.',
  nl: 'Klantenservice via telefoon, chat en e-mail. Controleer met je postcode en huisnummer of het abonnement op je adres beschikbaar is.',
  de: 'Kundendienst per Telefon, Chat und E-Mail. Prüfen Sie vor der Bestellung mit Postleitzahl und Hausnummer die Verfügbarkeit an Ihrer Adresse.',
  fr: 'Assistance par téléphone, chat et e-mail. Vérifiez la disponibilité à votre adresse avec votre code postal et votre numéro avant de commander.',
  es: 'Atención por teléfono, chat y correo electrónico. Comprueba la disponibilidad en tu dirección con el código postal y el número antes de contratar.',
};
const PLAN_DESCRIPTION: Tr = {
  en: 'Home internet over {conn} with {down} Mbit/s download and {up} Mbit/s upload.',
  nl: 'Thuisinternet via {conn} met {down} Mbit/s download en {up} Mbit/s upload.',
  de: 'Internet über {conn} mit {down} Mbit/s Download und {up} Mbit/s Upload.',
  fr: 'Internet par {conn} avec {down} Mbit/s en réception et {up} Mbit/s en émission.',
  es: 'Internet por {conn} con {down} Mbit/s de bajada y {up} Mbit/s de subida.',
};
const BASE_PRICE: Record<Conn, (down: number) => number> = {
  fiber: (d) => 4200 + 900 * Math.log2(Math.max(1, d / 100)),
  cable: (d) => 4000 + 850 * Math.log2(Math.max(1, d / 100)),
  dsl: (d) => 3800 + 600 * Math.log2(Math.max(1, d / 50)),
  '5g': () => 4500,
};

export function buildInternet(seed: number): { providers: InternetProviderRec[]; plans: InternetPlanRec[] } {
  const rng = rngFor(seed, 'internet');
  const providers: InternetProviderRec[] = [];
  const plans: InternetPlanRec[] = [];
  let planSeq = 0;
  ISPS.forEach((p, pi) => {
    const id = `inet_${pad(pi + 1, 3)}`;
    const slug = slugify(p.name);
    const published = p.published ?? true;
    const conns = [...new Set(p.plans.map((x) => x[0]))];
    const locales = pi === 0 ? ALL : pickLocales(rng, { nl: 0.85, de: 0.35, fr: 0.35, es: 0.35 });
    providers.push({
      id,
      slug,
      name: p.name,
      website_url: p.url,
      postcode_check_url: p.url,
      logo_url: `https://images.example.nl/logos/${slug}.svg`,
      customer_service_url: chance(rng, 0.6) ? p.url : null,
      support_languages: p.languages,
      description: localized(locales, (l) =>
        ISP_DESCRIPTION[l]!.replace('{name}', p.name).replace(
          '{conn}',
          joinList(
            conns.map((c) => CONN[c][l]!),
            AND[l]!,
          ),
        ),
      ),
      support_details: chance(rng, 0.75) ? only(ISP_SUPPORT, locales) : null,
      strengths: localized(locales, (l) => p.strengths.map((k) => STRENGTH[k]![l]!)),
      considerations: chance(rng, 0.85)
        ? localized(locales, (l) => p.considerations.map((k) => CONSIDERATION[k]![l]!))
        : null,
      published,
      last_verified_at: recent(rng, 60),
      updated_at: recent(rng, 200),
    });
    for (const [conn, down, up] of p.plans) {
      const regular = Math.round((BASE_PRICE[conn](down) * p.priceFactor) / 100) * 100 - 5;
      const intro = chance(rng, 0.5);
      const speed = down >= 1000 ? `${down / 1000} Gbit/s` : `${down} Mbit/s`;
      const planLocales = pickLocales(rng, { nl: 0.7, de: 0.25, fr: 0.25, es: 0.25 });
      const discontinued = !published || chance(rng, 0.05);
      plans.push({
        id: `plan_${pad(++planSeq, 4)}`,
        provider_id: id,
        name: `${p.name} ${CONN[conn].product} ${speed}`,
        connection_type: conn,
        download_mbps: down,
        upload_mbps: up,
        minimum_contract_months: pick(rng, [1, 12, 12, 24]),
        regular_monthly_price_cents: regular,
        intro_monthly_price_cents: intro ? regular - pick(rng, [500, 1000, 1500, 2000]) : null,
        intro_duration_months: intro ? pick(rng, [3, 6, 12]) : null,
        activation_fee_cents: pick(rng, [0, 0, 1995, 2500, 4995]),
        installation_fee_cents: conn === 'fiber' ? pick(rng, [0, 0, 0, 9995]) : chance(rng, 0.3) ? null : 0,
        currency: 'EUR',
        official_url: p.url,
        postcode_check_url: chance(rng, 0.7) ? p.url : null,
        availability_status: discontinued
          ? 'discontinued'
          : conn === '5g'
            ? 'limited'
            : conn === 'cable'
              ? 'available'
              : 'postcode_check',
        description: chance(rng, 0.9)
          ? localized(planLocales, (l) =>
              PLAN_DESCRIPTION[l]!.replace('{conn}', CONN[conn][l]!)
                .replace('{down}', String(down))
                .replace('{up}', String(up)),
            )
          : null,
        published: !discontinued,
        last_verified_at: chance(rng, 0.1) ? null : recent(rng, 60),
        updated_at: recent(rng, 200),
      });
    }
  });
  return { providers, plans };
}

// ---------------------------------------------------------------------------------------------------- insurance

type InsType = 'contents' | 'liability' | 'legal' | 'tenant-bundle';
const INS_TYPE: Record<InsType, { nlName: string; kind: string; headline: Tr; summary: Tr }> = {
  contents: {
    nlName: 'Inboedelverzekering',
    kind: 'standalone',
    headline: {
      en: 'Covers your belongings against fire, theft and water damage',
      nl: 'Verzekert je spullen tegen brand, diefstal en waterschade',
      de: 'Versichert Ihren Hausrat gegen Feuer, Diebstahl und Wasserschäden',
      fr: "Assure vos biens contre l'incendie, le vol et les dégâts des eaux",
      es: 'Asegura tus pertenencias contra incendio, robo y daños por agua',
    },
    summary: {
      en: "Contents insurance (inboedelverzekering) for tenants: furniture, electronics and clothing are covered; the building itself is the landlord's responsibility.",
      nl: 'Inboedelverzekering voor huurders: meubels, elektronica en kleding zijn verzekerd; het gebouw zelf is de verantwoordelijkheid van de verhuurder.',
      de: 'Hausratversicherung (inboedelverzekering) für Mieter: Möbel, Elektronik und Kleidung sind versichert; für das Gebäude selbst ist der Vermieter zuständig.',
      fr: 'Assurance habitation (inboedelverzekering) pour locataires : meubles, appareils électroniques et vêtements sont couverts ; le bâtiment relève du propriétaire.',
      es: 'Seguro de contenido (inboedelverzekering) para inquilinos: cubre muebles, aparatos electrónicos y ropa; el edificio es responsabilidad del propietario.',
    },
  },
  liability: {
    nlName: 'Aansprakelijkheidsverzekering',
    kind: 'standalone',
    headline: {
      en: 'Covers damage you accidentally cause to others',
      nl: 'Dekt schade die je per ongeluk aan anderen toebrengt',
      de: 'Deckt Schäden, die Sie anderen versehentlich zufügen',
      fr: 'Couvre les dommages causés accidentellement à autrui',
      es: 'Cubre los daños que causes accidentalmente a terceros',
    },
    summary: {
      en: 'Personal liability insurance (AVP), including damage to the rented home caused by accidents such as a leaking washing machine.',
      nl: 'Aansprakelijkheidsverzekering voor particulieren (AVP), inclusief schade aan de huurwoning door bijvoorbeeld een lekkende wasmachine.',
      de: 'Private Haftpflichtversicherung (AVP), einschließlich Schäden an der Mietwohnung, etwa durch eine undichte Waschmaschine.',
      fr: 'Responsabilité civile (AVP), y compris les dommages au logement loué, par exemple une fuite de lave-linge.',
      es: 'Seguro de responsabilidad civil (AVP), incluidos los daños a la vivienda alquilada, por ejemplo por una fuga de la lavadora.',
    },
  },
  legal: {
    nlName: 'Rechtsbijstandverzekering',
    kind: 'standalone',
    headline: {
      en: 'Legal help in disputes with your landlord',
      nl: 'Juridische hulp bij een conflict met je verhuurder',
      de: 'Rechtshilfe bei Streit mit Ihrem Vermieter',
      fr: 'Aide juridique en cas de litige avec votre propriétaire',
      es: 'Ayuda jurídica en conflictos con tu casero',
    },
    summary: {
      en: 'Legal expenses insurance (rechtsbijstand) with a housing module, for example for disputes about repairs, service costs or the deposit.',
      nl: 'Rechtsbijstandverzekering met module wonen, bijvoorbeeld voor conflicten over reparaties, servicekosten of de borg.',
      de: 'Rechtsschutzversicherung (rechtsbijstand) mit Wohnmodul, etwa bei Streit über Reparaturen, Nebenkosten oder die Kaution.',
      fr: 'Protection juridique (rechtsbijstand) avec volet logement, par exemple pour les litiges sur les réparations, les charges ou le dépôt de garantie.',
      es: 'Seguro de defensa jurídica (rechtsbijstand) con módulo de vivienda, por ejemplo para conflictos sobre reparaciones, gastos o la fianza.',
    },
  },
  'tenant-bundle': {
    nlName: 'Woonpakket voor huurders',
    kind: 'bundle',
    headline: {
      en: 'Contents, liability and legal cover in one tenant package',
      nl: 'Inboedel, aansprakelijkheid en rechtsbijstand in één pakket voor huurders',
      de: 'Hausrat, Haftpflicht und Rechtsschutz in einem Mieterpaket',
      fr: 'Habitation, responsabilité civile et protection juridique en une formule locataire',
      es: 'Hogar, responsabilidad civil y defensa jurídica en un paquete para inquilinos',
    },
    summary: {
      en: 'A package for tenants combining contents, liability and legal expenses insurance, usually with a package discount.',
      nl: 'Een pakket voor huurders met inboedel-, aansprakelijkheids- en rechtsbijstandverzekering, meestal met pakketkorting.',
      de: 'Ein Paket für Mieter aus Hausrat-, Haftpflicht- und Rechtsschutzversicherung, meist mit Paketrabatt.',
      fr: 'Une formule pour locataires réunissant habitation, responsabilité civile et protection juridique, généralement avec une remise.',
      es: 'Un paquete para inquilinos que combina seguro de contenido, de responsabilidad civil y de defensa jurídica, normalmente con descuento.',
    },
  },
};
const INSURERS: { name: string; url: string; types: InsType[]; published?: false }[] = [
  {
    name: 'Centraal Beheer',
    url: 'https://www.centraalbeheer.nl',
    types: ['contents', 'contents', 'liability', 'legal', 'tenant-bundle'],
  },
  { name: 'Interpolis', url: 'https://www.interpolis.nl', types: ['contents', 'liability', 'legal', 'tenant-bundle'] },
  { name: 'FBTO', url: 'https://www.fbto.nl', types: ['contents', 'liability', 'legal'] },
  {
    name: 'Nationale-Nederlanden',
    url: 'https://www.nn.nl',
    types: ['contents', 'liability', 'legal', 'tenant-bundle'],
  },
  { name: 'a.s.r.', url: 'https://www.asr.nl', types: ['contents', 'liability', 'legal', 'tenant-bundle'] },
  { name: 'Allianz Direct', url: 'https://www.allianzdirect.nl', types: ['contents', 'liability', 'tenant-bundle'] },
  { name: 'Univé', url: 'https://www.unive.nl', types: ['contents', 'liability'], published: false },
];

export function buildInsurance(seed: number): { providers: InsuranceProviderRec[]; products: InsuranceProductRec[] } {
  const rng = rngFor(seed, 'insurance');
  const providers: InsuranceProviderRec[] = [];
  const products: InsuranceProductRec[] = [];
  let seq = 0;
  INSURERS.forEach((p, pi) => {
    const id = `insurer_${pad(pi + 1, 3)}`;
    const slug = slugify(p.name);
    const published = p.published ?? true;
    providers.push({
      id,
      slug,
      name: p.name,
      website_url: p.url,
      logo_url: `https://images.example.nl/logos/${slug}.svg`,
      customer_service_url: chance(rng, 0.7) ? p.url : null,
      complaints_url: chance(rng, 0.4) ? p.url : null,
      published,
      last_verified_at: chance(rng, 0.15) ? null : recent(rng, 90),
      updated_at: recent(rng, 300),
    });
    p.types.forEach((t, ti) => {
      const def = INS_TYPE[t];
      const extra = ti > 0 && p.types[ti - 1] === t; // second product of the same type: the extended variant
      const locales = pickLocales(rng, { nl: 0.8, de: 0.3, fr: 0.3, es: 0.3 });
      const official = extra ? `${def.nlName} Extra` : def.nlName;
      products.push({
        id: `insprod_${pad(++seq, 4)}`,
        slug: `${slug}-${slugify(official)}`,
        provider_id: id,
        name: `${p.name} ${official}`,
        official_name: chance(rng, 0.85) ? official : null,
        insurance_type: t,
        product_kind: t === 'legal' && chance(rng, 0.4) ? 'add_on' : def.kind,
        availability: chance(rng, 0.15) ? 'limited' : 'available',
        official_url: p.url,
        quote_url: chance(rng, 0.5) ? p.url : null,
        headline: only(def.headline, locales),
        summary: chance(rng, 0.9) ? only(def.summary, locales) : null,
        published: published && !chance(rng, 0.06),
        last_verified_at: chance(rng, 0.1) ? null : recent(rng, 90),
        updated_at: recent(rng, 300),
      });
    });
  });
  return { providers, products };
}

// ---------------------------------------------------------------------------------------------------- platforms

type PlatformType = 'listing_site' | 'agency_portal' | 'social_housing' | 'aggregator';
interface PlatformDef {
  name: string;
  url: string;
  type: PlatformType;
  category: string;
  features: string[];
  registration: boolean;
  registrationFee?: number;
  subscriptionFrom?: number;
  languages: string[];
  published?: false;
}
/** Platforms; the published listing sites and aggregators also appear as listing sources. */
export const PLATFORMS: PlatformDef[] = [
  {
    name: 'Funda',
    url: 'https://www.funda.nl',
    type: 'listing_site',
    category: 'rent_and_sale',
    features: ['alerts', 'map', 'app'],
    registration: false,
    languages: ['nl', 'en'],
  },
  {
    name: 'Pararius',
    url: 'https://www.pararius.nl',
    type: 'listing_site',
    category: 'rent',
    features: ['alerts', 'map', 'english', 'app'],
    registration: false,
    languages: ['nl', 'en'],
  },
  {
    name: 'Kamernet',
    url: 'https://kamernet.nl',
    type: 'listing_site',
    category: 'rooms',
    features: ['alerts', 'students', 'english', 'verified'],
    registration: true,
    subscriptionFrom: 19.5,
    languages: ['nl', 'en'],
  },
  {
    name: 'HousingAnywhere',
    url: 'https://housinganywhere.com',
    type: 'listing_site',
    category: 'mid_term',
    features: ['furnished', 'english', 'verified'],
    registration: true,
    languages: ['en', 'nl', 'de', 'fr', 'es'],
  },
  {
    name: 'Huurwoningen.nl',
    url: 'https://www.huurwoningen.nl',
    type: 'listing_site',
    category: 'rent',
    features: ['alerts', 'map'],
    registration: true,
    subscriptionFrom: 24.95,
    languages: ['nl', 'en'],
  },
  {
    name: 'Huurstunt',
    url: 'https://www.huurstunt.nl',
    type: 'listing_site',
    category: 'rent',
    features: ['alerts'],
    registration: true,
    subscriptionFrom: 19.95,
    languages: ['nl'],
    published: false,
  },
  {
    name: 'Rentola',
    url: 'https://rentola.nl',
    type: 'aggregator',
    category: 'rent',
    features: ['alerts', 'map', 'english'],
    registration: true,
    subscriptionFrom: 29.95,
    languages: ['nl', 'en', 'de'],
  },
  {
    name: 'WoningNet',
    url: 'https://www.woningnet.nl',
    type: 'social_housing',
    category: 'social',
    features: ['waiting', 'alerts'],
    registration: true,
    registrationFee: 25,
    languages: ['nl'],
  },
  {
    name: 'Woonnet Haaglanden',
    url: 'https://www.woonnet-haaglanden.nl',
    type: 'social_housing',
    category: 'social',
    features: ['waiting'],
    registration: true,
    registrationFee: 20,
    languages: ['nl'],
  },
  {
    name: 'ROOM',
    url: 'https://www.room.nl',
    type: 'social_housing',
    category: 'student',
    features: ['waiting', 'students', 'english'],
    registration: true,
    registrationFee: 15,
    languages: ['nl', 'en'],
  },
  {
    name: 'Holland2Stay',
    url: 'https://www.holland2stay.com',
    type: 'agency_portal',
    category: 'furnished',
    features: ['furnished', 'english', 'verified'],
    registration: true,
    languages: ['en', 'nl'],
  },
  {
    name: 'Vesteda',
    url: 'https://www.vesteda.com',
    type: 'agency_portal',
    category: 'mid_rent',
    features: ['alerts', 'verified'],
    registration: true,
    languages: ['nl', 'en'],
  },
  {
    name: 'Kamers Noord',
    url: 'https://kamers-noord.example.nl',
    type: 'listing_site',
    category: 'rooms',
    features: ['students'],
    registration: false,
    languages: ['nl'],
    published: false,
  },
];

const PLATFORM_FEATURE: Record<string, Tr> = {
  alerts: {
    en: 'E-mail alerts for new listings',
    nl: 'E-mailalerts voor nieuw aanbod',
    de: 'E-Mail-Benachrichtigung bei neuen Angeboten',
    fr: 'Alertes e-mail pour les nouvelles annonces',
    es: 'Alertas por correo de nuevos anuncios',
  },
  map: {
    en: 'Map search',
    nl: 'Zoeken op de kaart',
    de: 'Kartensuche',
    fr: 'Recherche sur carte',
    es: 'Búsqueda en el mapa',
  },
  english: {
    en: 'Listings and support in English',
    nl: 'Aanbod en ondersteuning in het Engels',
    de: 'Angebote und Support auf Englisch',
    fr: 'Annonces et assistance en anglais',
    es: 'Anuncios y asistencia en inglés',
  },
  verified: {
    en: 'Verified landlords',
    nl: 'Geverifieerde verhuurders',
    de: 'Verifizierte Vermieter',
    fr: 'Propriétaires vérifiés',
    es: 'Propietarios verificados',
  },
  waiting: {
    en: 'Allocation by registration time',
    nl: 'Toewijzing op inschrijfduur',
    de: 'Vergabe nach Wartezeit',
    fr: "Attribution selon l'ancienneté d'inscription",
    es: 'Adjudicación por tiempo de inscripción',
  },
  app: { en: 'Mobile app', nl: 'Mobiele app', de: 'Mobile App', fr: 'Application mobile', es: 'Aplicación móvil' },
  furnished: {
    en: 'Furnished homes for expats',
    nl: 'Gemeubileerde woningen voor expats',
    de: 'Möblierte Wohnungen für Expats',
    fr: 'Logements meublés pour expatriés',
    es: 'Viviendas amuebladas para expatriados',
  },
  students: {
    en: 'Rooms for students',
    nl: 'Kamers voor studenten',
    de: 'Zimmer für Studierende',
    fr: 'Chambres pour étudiants',
    es: 'Habitaciones para estudiantes',
  },
};
const PLATFORM_TEXT: Record<PlatformType, { headline: Tr; description: Tr; content: Tr }> = {
  listing_site: {
    headline: {
      en: 'Rental listings from landlords and agencies',
      nl: 'Huuraanbod van verhuurders en makelaars',
      de: 'Mietangebote von Vermietern und Maklern',
      fr: 'Annonces de location de propriétaires et d’agences',
      es: 'Anuncios de alquiler de propietarios y agencias',
    },
    description: {
      en: '{name} is a listing site where landlords and agencies advertise homes.',
      nl: '{name} is een woningsite waarop verhuurders en makelaars woningen aanbieden.',
      de: '{name} ist ein Immobilienportal, auf dem Vermieter und Makler Wohnungen anbieten.',
      fr: '{name} est un site d’annonces où propriétaires et agences publient des logements.',
      es: '{name} es un portal de anuncios donde propietarios y agencias publican viviendas.',
    },
    content: {
      en: '## How it works\n\nSearch by city, price and size, save a search and respond to listings directly. Landlords decide who gets a viewing.\n\n## Tips\n\n- Respond quickly: popular homes receive dozens of reactions within hours.\n- Never pay before you have seen the home and signed a contract.',
      nl: '## Zo werkt het\n\nZoek op stad, prijs en oppervlakte, bewaar een zoekopdracht en reageer direct op woningen. De verhuurder bepaalt wie mag bezichtigen.\n\n## Tips\n\n- Reageer snel: populaire woningen krijgen binnen enkele uren tientallen reacties.\n- Betaal nooit voordat je de woning hebt gezien en een contract hebt getekend.',
    },
  },
  aggregator: {
    headline: {
      en: 'Listings from many sites in one search',
      nl: 'Aanbod van veel sites in één zoekopdracht',
      de: 'Angebote vieler Portale in einer Suche',
      fr: 'Les annonces de nombreux sites en une seule recherche',
      es: 'Anuncios de muchos portales en una sola búsqueda',
    },
    description: {
      en: '{name} collects listings from many sites and agencies in one search.',
      nl: '{name} verzamelt aanbod van veel sites en makelaars in één zoekopdracht.',
      de: '{name} bündelt Angebote vieler Portale und Makler in einer Suche.',
      fr: '{name} rassemble les annonces de nombreux sites et agences en une seule recherche.',
      es: '{name} reúne anuncios de muchos portales y agencias en una sola búsqueda.',
    },
    content: {
      en: '## How it works\n\nThe site links to the original listing; you respond on the source site. Check that the listing is still available before you pay for a subscription.',
    },
  },
  social_housing: {
    headline: {
      en: 'Social housing by registration time',
      nl: 'Sociale huurwoningen op inschrijfduur',
      de: 'Sozialwohnungen nach Wartezeit',
      fr: "Logements sociaux selon l'ancienneté d'inscription",
      es: 'Vivienda social por tiempo de inscripción',
    },
    description: {
      en: '{name} is the regional system for social housing: register, build up registration time and respond to homes.',
      nl: '{name} is het regionale systeem voor sociale huurwoningen: schrijf je in, bouw inschrijfduur op en reageer op woningen.',
      de: '{name} ist das regionale System für Sozialwohnungen: registrieren, Wartezeit aufbauen und sich auf Wohnungen bewerben.',
      fr: "{name} est le système régional du logement social : inscrivez-vous, cumulez de l'ancienneté et postulez aux logements.",
      es: '{name} es el sistema regional de vivienda social: inscríbete, acumula antigüedad y responde a las viviendas.',
    },
    content: {
      en: '## Eligibility\n\nSocial housing has an income limit. Your registration time decides your place in the ranking, so register as early as possible.\n\n## Costs\n\nRegistration costs a one-off fee; see the pricing details.',
      nl: '## Wie komt in aanmerking?\n\nVoor sociale huur geldt een inkomensgrens. Je inschrijfduur bepaalt je plek in de rangorde, dus schrijf je zo vroeg mogelijk in.\n\n## Kosten\n\nInschrijven kost eenmalig een bedrag; zie de prijsinformatie.',
    },
  },
  agency_portal: {
    headline: {
      en: 'Apply directly with the landlord',
      nl: 'Rechtstreeks reageren bij de verhuurder',
      de: 'Direkt beim Vermieter bewerben',
      fr: 'Postulez directement auprès du bailleur',
      es: 'Solicita directamente al propietario',
    },
    description: {
      en: '{name} is the rental portal of a landlord: you apply directly for its own homes.',
      nl: '{name} is het verhuurportaal van een verhuurder: je reageert rechtstreeks op de eigen woningen.',
      de: '{name} ist das Mietportal eines Vermieters: Sie bewerben sich direkt auf dessen Wohnungen.',
      fr: "{name} est le portail de location d'un bailleur : vous postulez directement pour ses logements.",
      es: '{name} es el portal de alquiler de un propietario: solicitas directamente sus viviendas.',
    },
    content: {
      en: '## How it works\n\nCreate an account, upload your documents once and apply for homes. There is no subscription fee.',
    },
  },
};
const PRICING: { free: Tr; subscription: Tr; registration: Tr } = {
  free: {
    en: 'Searching and responding is free for tenants.',
    nl: 'Zoeken en reageren is gratis voor huurders.',
    de: 'Suchen und Bewerben ist für Mieter kostenlos.',
    fr: 'La recherche et les candidatures sont gratuites pour les locataires.',
    es: 'Buscar y responder es gratis para los inquilinos.',
  },
  subscription: {
    en: 'Responding to listings requires a paid subscription from €{fee} per month.',
    nl: 'Reageren op woningen kan met een betaald abonnement vanaf € {fee} per maand.',
    de: 'Für Bewerbungen ist ein kostenpflichtiges Abo ab {fee} € pro Monat nötig.',
    fr: 'Répondre aux annonces nécessite un abonnement payant à partir de {fee} € par mois.',
    es: 'Para responder a anuncios se necesita una suscripción de pago desde {fee} € al mes.',
  },
  registration: {
    en: 'Registration costs a one-off €{fee}.',
    nl: 'Inschrijven kost eenmalig € {fee}.',
    de: 'Die Registrierung kostet einmalig {fee} €.',
    fr: "L'inscription coûte {fee} € une seule fois.",
    es: 'La inscripción cuesta {fee} € una sola vez.',
  },
};
const fmtFee = (fee: number, l: Locale) =>
  (l === 'en' ? fee.toFixed(2) : fee.toFixed(2).replace('.', ',')).replace(/[.,]00$/, '');

export function buildPlatforms(seed: number): PlatformRec[] {
  const rng = rngFor(seed, 'platforms');
  return PLATFORMS.map((p, i) => {
    const slug = slugify(p.name);
    const locales = i === 0 ? ALL : pickLocales(rng, { nl: 0.85, de: 0.35, fr: 0.35, es: 0.35 });
    const text = PLATFORM_TEXT[p.type];
    const fee = p.subscriptionFrom ?? p.registrationFee;
    const pricing =
      p.subscriptionFrom !== undefined
        ? PRICING.subscription
        : p.registrationFee !== undefined
          ? PRICING.registration
          : PRICING.free;
    return {
      id: `plat_${pad(i + 1, 3)}`,
      slug,
      name: p.name,
      url: p.url,
      logo_url: chance(rng, 0.8) ? `https://images.example.nl/logos/${slug}.svg` : null,
      type: p.type,
      category: p.category,
      registration_required: p.registration,
      registration_fee_amount: p.registrationFee ?? null,
      subscription_fee_from: p.subscriptionFrom ?? null,
      fee_currency: fee !== undefined ? 'EUR' : null,
      headline: only(text.headline, locales),
      features: localized(locales, (l) => p.features.map((f) => PLATFORM_FEATURE[f]![l]!)),
      attributes: chance(rng, 0.2)
        ? null
        : {
            languages: p.languages,
            mobile_app: p.features.includes('app'),
            ...(p.type === 'social_housing' ? { income_limit_applies: true } : {}),
          },
      description: localized(locales, (l) => text.description[l]!.replace('{name}', p.name)),
      pricing_details: localized(locales, (l) => pricing[l]!.replace('{fee}', fee === undefined ? '' : fmtFee(fee, l))),
      content: chance(rng, 0.8) ? only(text.content, locales) : null,
      published: p.published ?? true,
      last_verified_at: chance(rng, 0.1) ? null : recent(rng, 90),
      updated_at: recent(rng, 300),
    };
  });
}

/** Published platforms that listings can name as their source. */
export const LISTING_SOURCE_PLATFORMS = PLATFORMS.filter(
  (p) => (p.published ?? true) && (p.type === 'listing_site' || p.type === 'aggregator'),
).map((p) => slugify(p.name));

// ---------------------------------------------------------------------------------------------------- metrics

export const METRICS: MetricRec[] = [
  {
    id: 'median_rent',
    name: {
      en: 'Median rent',
      nl: 'Mediane huurprijs',
      de: 'Mittlere Miete (Median)',
      fr: 'Loyer médian',
      es: 'Alquiler mediano',
    },
    description: {
      en: 'Median asking rent per month of the rental listings first seen in the period.',
      nl: 'Mediane vraaghuur per maand van de huurwoningen die in de periode voor het eerst zijn gezien.',
      de: 'Median der monatlichen Angebotsmiete der im Zeitraum erstmals erfassten Mietangebote.',
      fr: 'Loyer mensuel médian demandé des annonces de location apparues pendant la période.',
      es: 'Mediana del alquiler mensual pedido de los anuncios vistos por primera vez en el periodo.',
    },
    unit: 'EUR',
    aggregation: 'median_price_eur',
    min_sample_size: 5,
  },
  {
    id: 'median_rent_per_m2',
    name: {
      en: 'Median rent per m²',
      nl: 'Mediane huurprijs per m²',
      de: 'Mittlere Miete pro m²',
      fr: 'Loyer médian au m²',
      es: 'Alquiler mediano por m²',
    },
    description: {
      en: 'Median asking rent per square metre per month of the rental listings first seen in the period (listings without a size are left out).',
      nl: 'Mediane vraaghuur per vierkante meter per maand van de huurwoningen die in de periode voor het eerst zijn gezien (woningen zonder oppervlakte tellen niet mee).',
    },
    unit: 'EUR/m2',
    aggregation: 'median_price_per_m2',
    min_sample_size: 5,
  },
  {
    id: 'new_listings',
    name: {
      en: 'New listings',
      nl: 'Nieuw aanbod',
      de: 'Neue Angebote',
      fr: 'Nouvelles annonces',
      es: 'Anuncios nuevos',
    },
    description: {
      en: 'Number of rental listings first seen in the period.',
      nl: 'Aantal huurwoningen dat in de periode voor het eerst is gezien.',
      fr: 'Nombre d’annonces de location apparues pendant la période.',
    },
    unit: 'listings',
    aggregation: 'count',
    min_sample_size: 1,
  },
  {
    id: 'average_rent',
    name: { en: 'Average rent', nl: 'Gemiddelde huurprijs' },
    description: {
      en: 'Mean asking rent per month of the rental listings first seen in the period; more sensitive to outliers than the median.',
    },
    unit: 'EUR',
    aggregation: 'average_price_eur',
    min_sample_size: 10,
  },
];
