// Listing vocabulary for the source-data generator: property types, adjectives, features and sentence templates
// in en/nl/de/fr/es, with the grammar (gender, inflection) each language needs. Titles and descriptions are
// composed from these, so every translation says the same thing as the English text.
import type { Locale } from '../snapshot-format/locales.ts';
import type { Tr } from './random.ts';

export interface PropertyType {
  code: string;
  share: number;
  en: string;
  nl: string;
  /** Dutch "het" noun: an indefinite adjective stays uninflected ("licht appartement"). */
  nlHet: boolean;
  de: string;
  deGender: 'f' | 'n';
  fr: string;
  frFem: boolean;
  es: string;
  esFem: boolean;
  /** Has a room count in its title ("2-room apartment"). */
  roomsInTitle: boolean;
}

export const PROPERTY_TYPES: PropertyType[] = [
  {
    code: 'apartment',
    share: 55,
    en: 'apartment',
    nl: 'appartement',
    nlHet: true,
    de: 'Wohnung',
    deGender: 'f',
    fr: 'appartement',
    frFem: false,
    es: 'apartamento',
    esFem: false,
    roomsInTitle: true,
  },
  {
    code: 'studio',
    share: 12,
    en: 'studio',
    nl: 'studio',
    nlHet: false,
    de: 'Studio',
    deGender: 'n',
    fr: 'studio',
    frFem: false,
    es: 'estudio',
    esFem: false,
    roomsInTitle: false,
  },
  {
    code: 'room',
    share: 10,
    en: 'room',
    nl: 'kamer',
    nlHet: false,
    de: 'Zimmer',
    deGender: 'n',
    fr: 'chambre',
    frFem: true,
    es: 'habitación',
    esFem: true,
    roomsInTitle: false,
  },
  {
    code: 'house',
    share: 13,
    en: 'house',
    nl: 'eengezinswoning',
    nlHet: false,
    de: 'Haus',
    deGender: 'n',
    fr: 'maison',
    frFem: true,
    es: 'casa',
    esFem: true,
    roomsInTitle: true,
  },
  {
    code: 'maisonette',
    share: 6,
    en: 'maisonette',
    nl: 'maisonnette',
    nlHet: false,
    de: 'Maisonette',
    deGender: 'f',
    fr: 'duplex',
    frFem: false,
    es: 'dúplex',
    esFem: false,
    roomsInTitle: true,
  },
  {
    code: 'penthouse',
    share: 4,
    en: 'penthouse',
    nl: 'penthouse',
    nlHet: true,
    de: 'Penthouse',
    deGender: 'n',
    fr: 'penthouse',
    frFem: false,
    es: 'ático',
    esFem: false,
    roomsInTitle: true,
  },
];

interface Adjective {
  weight: number;
  en: string;
  nl: [string, string]; // [uninflected, inflected]
  de: string; // stem; strong ending added per gender
  fr: [string, string]; // [masculine, feminine]
  es: [string, string];
}

export const ADJECTIVES: Adjective[] = [
  {
    weight: 25,
    en: 'Bright',
    nl: ['licht', 'lichte'],
    de: 'hell',
    fr: ['lumineux', 'lumineuse'],
    es: ['luminoso', 'luminosa'],
  },
  {
    weight: 14,
    en: 'Spacious',
    nl: ['ruim', 'ruime'],
    de: 'geräumig',
    fr: ['spacieux', 'spacieuse'],
    es: ['amplio', 'amplia'],
  },
  {
    weight: 12,
    en: 'Modern',
    nl: ['modern', 'moderne'],
    de: 'modern',
    fr: ['moderne', 'moderne'],
    es: ['moderno', 'moderna'],
  },
  {
    weight: 10,
    en: 'Cosy',
    nl: ['gezellig', 'gezellige'],
    de: 'gemütlich',
    fr: ['chaleureux', 'chaleureuse'],
    es: ['acogedor', 'acogedora'],
  },
  {
    weight: 10,
    en: 'Renovated',
    nl: ['gerenoveerd', 'gerenoveerde'],
    de: 'renoviert',
    fr: ['rénové', 'rénovée'],
    es: ['reformado', 'reformada'],
  },
  {
    weight: 10,
    en: 'Quiet',
    nl: ['rustig', 'rustige'],
    de: 'ruhig',
    fr: ['calme', 'calme'],
    es: ['tranquilo', 'tranquila'],
  },
  {
    weight: 10,
    en: 'Charming',
    nl: ['sfeervol', 'sfeervolle'],
    de: 'charmant',
    fr: ['charmant', 'charmante'],
    es: ['encantador', 'encantadora'],
  },
  {
    weight: 9,
    en: 'Sunny',
    nl: ['zonnig', 'zonnige'],
    de: 'sonnig',
    fr: ['ensoleillé', 'ensoleillée'],
    es: ['soleado', 'soleada'],
  },
];

/** Equipment mentioned in descriptions; `p` is the chance per listing. */
export const FEATURES: (Tr & { p: number })[] = [
  { p: 0.35, en: 'balcony', nl: 'balkon', de: 'Balkon', fr: 'balcon', es: 'balcón' },
  { p: 0.4, en: 'dishwasher', nl: 'vaatwasser', de: 'Geschirrspüler', fr: 'lave-vaisselle', es: 'lavavajillas' },
  { p: 0.3, en: 'washing machine', nl: 'wasmachine', de: 'Waschmaschine', fr: 'lave-linge', es: 'lavadora' },
  { p: 0.12, en: 'garden', nl: 'tuin', de: 'Garten', fr: 'jardin', es: 'jardín' },
  { p: 0.07, en: 'roof terrace', nl: 'dakterras', de: 'Dachterrasse', fr: 'toit-terrasse', es: 'terraza en la azotea' },
  { p: 0.2, en: 'lift', nl: 'lift', de: 'Aufzug', fr: 'ascenseur', es: 'ascensor' },
  {
    p: 0.1,
    en: 'private parking space',
    nl: 'eigen parkeerplaats',
    de: 'eigener Stellplatz',
    fr: 'place de parking privée',
    es: 'plaza de aparcamiento propia',
  },
  { p: 0.2, en: 'storage room', nl: 'berging', de: 'Abstellraum', fr: 'cave', es: 'trastero' },
  { p: 0.15, en: 'bathtub', nl: 'ligbad', de: 'Badewanne', fr: 'baignoire', es: 'bañera' },
  {
    p: 0.12,
    en: 'underfloor heating',
    nl: 'vloerverwarming',
    de: 'Fußbodenheizung',
    fr: 'plancher chauffant',
    es: 'suelo radiante',
  },
  { p: 0.03, en: 'fireplace', nl: 'open haard', de: 'Kamin', fr: 'cheminée', es: 'chimenea' },
  {
    p: 0.08,
    en: 'solar panels',
    nl: 'zonnepanelen',
    de: 'Solaranlage',
    fr: 'panneaux solaires',
    es: 'paneles solares',
  },
  {
    p: 0.15,
    en: 'bicycle shed',
    nl: 'fietsenstalling',
    de: 'Fahrradkeller',
    fr: 'local à vélos',
    es: 'aparcamiento para bicicletas',
  },
];

const FEATURE_LABEL: Tr = {
  en: 'Features',
  nl: 'Kenmerken',
  de: 'Ausstattung',
  fr: 'Équipements',
  es: 'Características',
};

export const SURROUNDINGS: Tr[] = [
  {
    en: 'Close to shops, cafés and public transport.',
    nl: 'Dicht bij winkels, cafés en openbaar vervoer.',
    de: 'Nahe Geschäften, Cafés und öffentlichen Verkehrsmitteln.',
    fr: 'Proche des commerces, des cafés et des transports en commun.',
    es: 'Cerca de tiendas, cafeterías y transporte público.',
  },
  {
    en: 'A ten-minute walk from the station.',
    nl: 'Op tien minuten lopen van het station.',
    de: 'Zehn Gehminuten vom Bahnhof entfernt.',
    fr: 'À dix minutes à pied de la gare.',
    es: 'A diez minutos a pie de la estación.',
  },
  {
    en: 'Located on a quiet street near a park.',
    nl: 'Gelegen in een rustige straat vlak bij een park.',
    de: 'In einer ruhigen Straße nahe einem Park gelegen.',
    fr: "Situé dans une rue calme près d'un parc.",
    es: 'Situado en una calle tranquila cerca de un parque.',
  },
  {
    en: 'Within cycling distance of the city centre.',
    nl: 'Op fietsafstand van het centrum.',
    de: 'Das Zentrum ist mit dem Fahrrad gut erreichbar.',
    fr: 'Le centre-ville est accessible à vélo.',
    es: 'A poca distancia en bicicleta del centro.',
  },
  {
    en: 'Good connections to the motorway and the university.',
    nl: 'Goed bereikbaar via de snelweg en dicht bij de universiteit.',
    de: 'Gute Anbindung an die Autobahn und die Universität.',
    fr: "Bien desservi par l'autoroute et proche de l'université.",
    es: 'Buena conexión con la autopista y la universidad.',
  },
  {
    en: 'Overlooking the water, with a supermarket around the corner.',
    nl: 'Met uitzicht op het water en een supermarkt om de hoek.',
    de: 'Mit Blick aufs Wasser und einem Supermarkt um die Ecke.',
    fr: "Vue sur l'eau, avec un supermarché au coin de la rue.",
    es: 'Con vistas al agua y un supermercado a la vuelta de la esquina.',
  },
];

const BRIGHT_SENTENCE: Tr = {
  en: 'The living room is bright thanks to large windows.',
  nl: 'De woonkamer is licht dankzij grote ramen.',
  de: 'Das Wohnzimmer ist dank großer Fenster hell.',
  fr: 'Le séjour est lumineux grâce à de grandes fenêtres.',
  es: 'El salón es luminoso gracias a sus grandes ventanales.',
};

const FURNISHING_SENTENCE: Record<'SHELL' | 'UPHOLSTERED' | 'FURNISHED', Tr> = {
  SHELL: {
    en: 'Offered unfurnished (shell): no flooring or curtains.',
    nl: 'Wordt kaal opgeleverd: zonder vloer en gordijnen.',
    de: 'Wird unmöbliert ohne Bodenbelag und Vorhänge vermietet.',
    fr: 'Loué vide, sans revêtement de sol ni rideaux.',
    es: 'Se alquila vacío, sin suelos ni cortinas.',
  },
  UPHOLSTERED: {
    en: 'Offered upholstered: flooring, curtains and light fittings included.',
    nl: 'Wordt gestoffeerd opgeleverd: vloer, gordijnen en verlichting aanwezig.',
    de: 'Teilmöbliert: Bodenbelag, Vorhänge und Leuchten sind vorhanden.',
    fr: 'Loué semi-meublé : sols, rideaux et luminaires inclus.',
    es: 'Se alquila semiamueblado: suelos, cortinas y lámparas incluidos.',
  },
  FURNISHED: {
    en: 'Offered fully furnished.',
    nl: 'Wordt volledig gemeubileerd verhuurd.',
    de: 'Wird komplett möbliert vermietet.',
    fr: 'Loué entièrement meublé.',
    es: 'Se alquila totalmente amueblado.',
  },
};

const SALE_SENTENCE: Tr = {
  en: 'For sale; viewings by appointment.',
  nl: 'Te koop; bezichtiging op afspraak.',
  de: 'Zu verkaufen; Besichtigung nach Vereinbarung.',
  fr: 'À vendre ; visites sur rendez-vous.',
  es: 'En venta; visitas con cita previa.',
};

/** Words that occur in fewer than 0.1% of listings (every `stride`-th listing, see data/README.md). */
export const RARE: (Tr & { word: string; stride: number; offset: number })[] = [
  {
    word: 'rooftop',
    stride: 1201,
    offset: 7,
    en: 'Residents share a rooftop garden with views over the city.',
    nl: 'Bewoners delen een daktuin met uitzicht over de stad.',
    de: 'Die Bewohner teilen sich einen Dachgarten mit Blick über die Stadt.',
    fr: 'Les résidents partagent un jardin sur le toit avec vue sur la ville.',
    es: 'Los residentes comparten un jardín en la azotea con vistas a la ciudad.',
  },
  {
    word: 'sauna',
    stride: 1301,
    offset: 11,
    en: 'The building has a shared sauna for residents.',
    nl: 'Het gebouw heeft een gezamenlijke sauna voor bewoners.',
    de: 'Das Gebäude verfügt über eine gemeinsame Sauna für die Bewohner.',
    fr: "L'immeuble dispose d'un sauna commun pour les résidents.",
    es: 'El edificio cuenta con una sauna para los residentes.',
  },
  {
    word: 'houseboat',
    stride: 1409,
    offset: 13,
    en: 'From the living room you look out over a houseboat in the canal.',
    nl: 'Vanuit de woonkamer kijk je uit op een woonboot in de gracht.',
    de: 'Vom Wohnzimmer aus blickt man auf ein Hausboot im Kanal.',
    fr: 'Depuis le séjour, vue sur une péniche amarrée dans le canal.',
    es: 'Desde el salón se ve una casa flotante en el canal.',
  },
  {
    word: 'windmill',
    stride: 1499,
    offset: 17,
    en: 'A historic windmill stands at the end of the street.',
    nl: 'Aan het eind van de straat staat een historische molen.',
    de: 'Am Ende der Straße steht eine historische Windmühle.',
    fr: 'Un moulin à vent historique se dresse au bout de la rue.',
    es: 'Al final de la calle se alza un molino de viento histórico.',
  },
];

export interface ListingText {
  type: PropertyType;
  adjective: Adjective;
  rooms: number | null;
  size: number | null;
  /** Neighbourhood name (not translated) or null when the listing is placed directly in the city. */
  area: string | null;
  city: Tr;
  offer: 'rent' | 'sale';
  furnishing: 'SHELL' | 'UPHOLSTERED' | 'FURNISHED' | null;
  features: Tr[];
  surroundings: Tr;
  bright: boolean;
  rare: Tr | null;
  serviceCosts: number | null;
  depositMonths: number | null;
  markdown: boolean;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const nameIn = (t: Tr, l: Locale) => t[l] ?? t.en;

export function listingTitle(x: ListingText, l: Locale): string {
  const t = x.type;
  const a = x.adjective;
  const where = x.area ?? nameIn(x.city, l);
  const r = x.rooms !== null && t.roomsInTitle ? x.rooms : null;
  switch (l) {
    case 'en':
      return r !== null ? `${a.en} ${r}-room ${t.en} in ${where}` : `${a.en} ${t.en} in ${where}`;
    case 'nl': {
      const adj = cap(a.nl[t.nlHet ? 0 : 1]);
      return r !== null
        ? `${adj} ${t.nl} met ${r} ${r === 1 ? 'kamer' : 'kamers'} in ${where}`
        : `${adj} ${t.nl} in ${where}`;
    }
    case 'de': {
      const adj = cap(a.de) + (t.deGender === 'f' ? 'e' : 'es');
      return r !== null ? `${adj} ${r}-Zimmer-${t.de} in ${where}` : `${adj} ${t.de} in ${where}`;
    }
    case 'fr': {
      const adj = a.fr[t.frFem ? 1 : 0];
      return r !== null
        ? `${cap(t.fr)} ${r} ${r === 1 ? 'pièce' : 'pièces'} ${adj} à ${where}`
        : `${cap(t.fr)} ${adj} à ${where}`;
    }
    case 'es': {
      const adj = a.es[t.esFem ? 1 : 0];
      return r !== null
        ? `${cap(t.es)} ${adj} de ${r} ${r === 1 ? 'habitación' : 'habitaciones'} en ${where}`
        : `${cap(t.es)} ${adj} en ${where}`;
    }
  }
}

function intro(x: ListingText, l: Locale): string {
  const t = x.type;
  const city = nameIn(x.city, l);
  const place = x.area ? `${x.area}, ${city}` : city;
  const r = t.code === 'room' || t.code === 'studio' ? null : x.rooms;
  const s = x.size;
  switch (l) {
    case 'en':
      return `${cap(t.en)}${s !== null ? ` of ${s} m²` : ''}${r !== null ? ` with ${r} ${r === 1 ? 'room' : 'rooms'}` : ''} in ${place}.`;
    case 'nl':
      return `${cap(t.nl)}${s !== null ? ` van ${s} m²` : ''}${r !== null ? ` met ${r} ${r === 1 ? 'kamer' : 'kamers'}` : ''} in ${place}.`;
    case 'de':
      return `${t.de}${s !== null ? ` mit ${s} m²` : ''}${r !== null ? `${s !== null ? ' und' : ' mit'} ${r} ${r === 1 ? 'Zimmer' : 'Zimmern'}` : ''} in ${place}.`;
    case 'fr':
      return `${cap(t.fr)}${s !== null ? ` de ${s} m²` : ''}${r !== null ? ` avec ${r} ${r === 1 ? 'pièce' : 'pièces'}` : ''} à ${place}.`;
    case 'es':
      return `${cap(t.es)}${s !== null ? ` de ${s} m²` : ''}${r !== null ? ` con ${r} ${r === 1 ? 'habitación' : 'habitaciones'}` : ''} en ${place}.`;
  }
}

function terms(x: ListingText, l: Locale): string | null {
  if (x.offer === 'sale') return SALE_SENTENCE[l]!;
  const sc = x.serviceCosts;
  const d = x.depositMonths;
  if (sc === null && d === null) return null;
  const parts: string[] = [];
  switch (l) {
    case 'en':
      if (sc !== null) parts.push(`service costs €${sc} per month`);
      if (d !== null) parts.push(`deposit ${d} ${d === 1 ? "month's" : "months'"} rent`);
      break;
    case 'nl':
      if (sc !== null) parts.push(`servicekosten € ${sc} per maand`);
      if (d !== null) parts.push(`waarborgsom ${d} ${d === 1 ? 'maand' : 'maanden'} huur`);
      break;
    case 'de':
      if (sc !== null) parts.push(`Nebenkosten ${sc} € pro Monat`);
      if (d !== null) parts.push(`Kaution ${d} ${d === 1 ? 'Monatsmiete' : 'Monatsmieten'}`);
      break;
    case 'fr':
      if (sc !== null) parts.push(`charges ${sc} € par mois`);
      if (d !== null) parts.push(`dépôt de garantie de ${d} mois de loyer`);
      break;
    case 'es':
      if (sc !== null) parts.push(`gastos de comunidad ${sc} € al mes`);
      if (d !== null) parts.push(`fianza de ${d} ${d === 1 ? 'mes' : 'meses'} de alquiler`);
      break;
  }
  return `${cap(parts.join(l === 'fr' ? ' ; ' : '; '))}.`;
}

export function listingDescription(x: ListingText, l: Locale): string {
  const first = [intro(x, l), x.surroundings[l]!];
  if (x.bright) first.push(BRIGHT_SENTENCE[l]!);
  if (x.rare) first.push(x.rare[l]!);
  const tail: string[] = [];
  if (x.offer === 'rent' && x.furnishing) tail.push(FURNISHING_SENTENCE[x.furnishing][l]!);
  const t = terms(x, l);
  if (t) tail.push(t);
  const names = x.features.map((f) => f[l]!);
  if (x.markdown) {
    let md = first.join(' ');
    if (names.length) md += `\n\n**${FEATURE_LABEL[l]}**\n\n${names.map((n) => `- ${n}`).join('\n')}`;
    if (tail.length) md += `\n\n${tail.join(' ')}`;
    return md;
  }
  const colon = l === 'fr' ? ' : ' : ': ';
  if (names.length) first.push(`${FEATURE_LABEL[l]}${colon}${names.join(', ')}.`);
  return [...first, ...tail].join(' ');
}
